// SPDX-License-Identifier: MIT
// --io (io_arg.h).
#include "io_arg.h"

#include <string>

namespace swaplab::tools {

void AddIoOption(CLI::App* c, area::EngineKind* kind) {
  c->add_option_function<std::string>(
       "--io",
       [kind](const std::string& name) {
         auto k = area::ParseEngineKind(name);
         if (!k.ok()) throw CLI::ValidationError("--io", k.status().message());
         *kind = *k;
       },
       "I/O engine for the area: auto (io_uring, or pread/pwrite where io_uring is unavailable) "
       "| uring | posix | sim (pread/pwrite timed by the simulated device's model)")
      ->type_name(area::EngineKindNames())
      ->default_str("auto");
}

}  // namespace swaplab::tools
