// Size arguments of the command line, one parser for every subcommand.
#pragma once

#include <string>

#include "swaplab/alloc/status.h"

namespace swaplab::tools {

// "4096", "64M", "1GiB", "512k": bytes, with binary multiples (K, M, G, T,
// any case, with or without B / iB). `opt` names the option in messages.
Result<uint64_t> ParseSize(const std::string& s, const std::string& opt);

}  // namespace swaplab::tools
