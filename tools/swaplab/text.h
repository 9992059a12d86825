// Text that came from input (labels, signatures, kernel strings in an
// image, paths) made safe for a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace swaplab::tools {

// Printable ASCII as is, backslash doubled, every other byte as \xNN; cut
// after max_bytes of input with "…" (a 10 MB token stays a line).
std::string Printable(std::string_view s, size_t max_bytes = 256);

}  // namespace swaplab::tools
