// SPDX-License-Identifier: MIT
// Traces from text in the workload tests: a reader over a string (named
// t.trace, so errors read "t.trace:LINE: ..."), and its first record.
#pragma once

#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::workload::trace_text {

inline TraceReader FromText(const std::string& text) {
  return TraceReader(std::make_unique<std::istringstream>(text), "t.trace");
}

// The first record of `body` (after the header line), or the reader's error.
inline Result<TraceRecord> First(const std::string& body) {
  TraceReader r = FromText("swaplab-trace 1\n" + body);
  TraceRecord rec;
  auto more = r.Next(&rec);
  if (!more.ok()) return more.status();
  if (!*more) return Status(-ENOENT, "no record");
  return rec;
}

// Every record of `body` (after the header line) through `runner`, calling
// `after` after each; the first error (the reader's or the runner's).
inline Status ApplyText(TraceRunner& runner, const std::string& body,
                        const std::function<void()>& after = {}) {
  TraceReader r = FromText("swaplab-trace 1\n" + body);
  TraceRecord rec;
  for (;;) {
    auto more = r.Next(&rec);
    if (!more.ok()) return more.status();
    if (!*more) return Status::Ok();
    if (Status st = runner.Apply(rec, "t.trace"); !st.ok()) return st;
    if (after) after();
  }
}

}  // namespace swaplab::workload::trace_text
