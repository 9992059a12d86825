// SPDX-License-Identifier: MIT
// One way to choose an I/O engine by name (--io auto|uring|posix|sim), and
// the one place where io_uring falls back to pread/pwrite when the kernel
// or a seccomp filter refuses io_uring_setup (containers often do).
#pragma once
#pragma GCC visibility push(default)

#include <memory>
#include <string>
#include <string_view>

#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine.h"

namespace swaplab::area {

enum class EngineKind {
  kAuto,   // io_uring; pread/pwrite where io_uring is unavailable (the default)
  kUring,  // io_uring only: an error where it is unavailable
  kPosix,  // preadv / pwritev (OpenPosixEngine)
  kSim,    // the file's bytes through pread/pwrite, timed by the simulated
           // device's cost model (OpenSimulatedFileEngine)
};

// "auto", "uring", "posix", "sim".
std::string_view Name(EngineKind k);
// The valid names, for help texts and messages: "auto | uring | posix | sim".
std::string EngineKindNames();
// The kind named `name` (exactly as Name() spells it); −EINVAL naming the
// bad value and the valid ones otherwise.
Result<EngineKind> ParseEngineKind(std::string_view name);

// Opens `path` with the engine `kind` names (EngineOptions as the engines
// take them). kAuto is kUring unless io_uring_setup fails with −ENOSYS,
// −EPERM or −EACCES: then kPosix, after a one-line notice on stderr, given
// once per process. Any other io_uring error is returned, as are the
// chosen engine's errors (−ENOENT, −EINVAL for a queue depth out of range,
// ...): they are not io_uring being unavailable.
Result<std::unique_ptr<IoEngine>> OpenEngine(EngineKind kind, const std::string& path,
                                             EngineOptions o);

// Tests only: the next fallback gives its notice again.
void RearmUringFallbackNotice();

}  // namespace swaplab::area
#pragma GCC visibility pop
