// SPDX-License-Identifier: MIT
// --io auto|uring|posix|sim on the commands that read or write a real area
// (image write / read / inspect, run, reproduce, vm hibernate): the engine
// by name (area/io_engine_factory.h).
#pragma once

#include <CLI/CLI.hpp>

#include "swaplab/area/io_engine_factory.h"

namespace swaplab::tools {

// Adds --io to `c`, parsed into *kind (default: kAuto, left as it is). A
// name ParseEngineKind refuses is bad usage: its message, exit 2.
void AddIoOption(CLI::App* c, area::EngineKind* kind);

}  // namespace swaplab::tools
