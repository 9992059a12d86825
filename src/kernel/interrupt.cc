// SPDX-License-Identifier: MIT
// Signals that interrupt a run (interrupt.h).
#include "swaplab/kernel/interrupt.h"

namespace swaplab::kernel {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void OnSignal(int) { g_interrupted = 1; }

}  // namespace

ScopedInterrupt::ScopedInterrupt(std::initializer_list<int> signals) {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : signals) {
    struct sigaction old {};
    sigaction(sig, &sa, &old);
    old_.emplace_back(sig, old);
  }
}

ScopedInterrupt::~ScopedInterrupt() {
  for (const auto& [sig, old] : old_) sigaction(sig, &old, nullptr);
}

const volatile std::sig_atomic_t* ScopedInterrupt::flag() { return &g_interrupted; }

}  // namespace swaplab::kernel
