// SPDX-License-Identifier: MIT
// The line `kernel run --floor` and `vm run --floor` print: the record
// loop's seconds next to the kernel's own cost of the same swap-outs
// (internal to src/report/).
#pragma once

#include <fmt/core.h>

#include <cstdint>
#include <string>

namespace swaplab::report {

struct FloorFigures {
  double records_seconds = 0;
  uint64_t pages = 0;   // the floor's pages on swap (0: no floor measured)
  double seconds = 0;   // one MADV_PAGEOUT
  uint64_t folios = 0;  // > 1: the run's folios and calls were measured too
  uint64_t calls = 0;
  double calls_seconds = 0;
};

// "" without a floor; `kernel` names whose it is ("kernel", "guest kernel").
inline std::string FloorLine(const FloorFigures& f, const char* kernel) {
  if (f.pages == 0 || f.seconds <= 0) return "";
  std::string out = fmt::format(
      "record loop {:.3f} s; the {}'s own swap-out of {} pages, with their faults: one "
      "MADV_PAGEOUT {:.3f} s ({:.1f}x)",
      f.records_seconds, kernel, f.pages, f.seconds, f.records_seconds / f.seconds);
  if (f.folios > 1 && f.calls_seconds > 0)
    out += fmt::format("; as the run's {} folios in its {} calls {:.3f} s ({:.1f}x)", f.folios,
                       f.calls, f.calls_seconds, f.records_seconds / f.calls_seconds);
  return out + "\n";
}

}  // namespace swaplab::report
