// SPDX-License-Identifier: MIT
// Worker threads over a shared queue of jobs, for the scenario runners.
#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace swaplab::workload {

// Runs `work` (which takes jobs from a shared queue until none is left) on
// this thread and n − 1 more, fewer if a thread cannot be started, and
// joins them. An exception out of `work` (std::bad_alloc) on any thread is
// rethrown here once every thread has ended: never std::terminate.
inline void RunWorkers(int n, const std::function<void()>& work) {
  std::mutex mu;
  std::exception_ptr first;
  auto guarded = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!first) first = std::current_exception();
    }
  };
  std::vector<std::thread> th;
  try {
    for (int t = 1; t < n; ++t) th.emplace_back(guarded);
  } catch (const std::system_error&) {  // no thread: the others take its jobs
  }
  guarded();
  for (auto& t : th) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace swaplab::workload
