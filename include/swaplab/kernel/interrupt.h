// SPDX-License-Identifier: MIT
// Runs that change the machine (kernel run's swap areas and settings, the
// vm layer's qemu and work directory) stop between steps when a signal
// asks them to and undo what they did. One handler sets one flag; the run
// polls it.
#pragma once
#pragma GCC visibility push(default)

#include <csignal>
#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::kernel {

// While alive, each of `signals` sets the flag (flag()) instead of its
// default action; the old actions come back at destruction.
class ScopedInterrupt {
 public:
  explicit ScopedInterrupt(std::initializer_list<int> signals);
  ~ScopedInterrupt();
  ScopedInterrupt(const ScopedInterrupt&) = delete;
  ScopedInterrupt& operator=(const ScopedInterrupt&) = delete;
  static const volatile std::sig_atomic_t* flag();

 private:
  std::vector<std::pair<int, struct sigaction>> old_;
};

// Runs f(flag) with `signals` caught (ScopedInterrupt). No exception may
// skip what the run undoes in destructors (a work dir's removal, qemu's
// kill): they only run when the exception is caught, here.
template <typename T, typename F>
Result<T> WithSignals(std::initializer_list<int> signals, F&& f) {
  ScopedInterrupt si(signals);
  try {
    return f(ScopedInterrupt::flag());
  } catch (const std::exception& e) {
    return Status(-EIO, std::string("internal error: ") + e.what());
  }
}

}  // namespace swaplab::kernel
#pragma GCC visibility pop
