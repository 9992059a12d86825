// SPDX-License-Identifier: MIT
// Which policy preset stands for a kernel release.
#pragma once
#pragma GCC visibility push(default)

#include <string>
#include <string_view>

namespace swaplab::alloc {

// The preset modelling kernel `release` ("6.12.118+deb12-amd64" →
// linux-6.12, "6.18.44-fc" → linux-6.18), or when none has its version the
// nearest newer preset (the newest when the release is newer than all);
// then *why says so, and is left empty for an exact match.
std::string PresetForRelease(std::string_view release, std::string* why = nullptr);

}  // namespace swaplab::alloc
#pragma GCC visibility pop
