// SPDX-License-Identifier: MIT
// The fault-injecting wrapper: passes every request to the inner engine and
// rewrites the completion of the Nth one (0-based, over all requests
// submitted through it) into a failure at its first page, or a short
// completion of half its pages. Requests keep their neighbours, so the inner
// engine merges them as it would without the fault (the device failed the
// request after the plug built it).
#include <fmt/core.h>

#include <unordered_map>

#include "area/io/plug.h"
#include "swaplab/area/io_engine.h"

namespace swaplab::area {
namespace {

class FaultInjectingEngine final : public IoEngine {
 public:
  FaultInjectingEngine(std::unique_ptr<IoEngine> inner, FaultPlan plan)
      : inner_(std::move(inner)), plan_(plan) {}

  std::string name() const override { return "fault(" + inner_->name() + ")"; }
  bool modelled() const override { return inner_->modelled(); }

  Status Submit(std::span<IoRequest> batch) override {
    // The inner engine sees private tags, so completions map back to the
    // caller's tag whatever tags the caller chose.
    std::vector<IoRequest> mine(batch.begin(), batch.end());
    for (size_t i = 0; i < mine.size(); ++i) mine[i].tag = next_ + i;
    if (Status s = inner_->Submit(mine); !s.ok()) return s;  // nothing queued
    for (size_t i = 0; i < batch.size(); ++i)
      flight_.emplace(next_ + i, Flight{batch[i].tag, batch[i].page,
                                        static_cast<uint32_t>(batch[i].bufs.size())});
    next_ += batch.size();
    return Status::Ok();
  }

  Status Wait(std::vector<IoCompletion>* done) override {
    std::vector<IoCompletion> inner_done;
    Status inner_status = inner_->Wait(&inner_done);
    bool bad = false;
    IoCompletion first_bad;
    for (IoCompletion c : inner_done) {
      auto it = flight_.find(c.tag);
      if (it == flight_.end()) continue;  // not ours: cannot happen
      const Flight f = it->second;
      flight_.erase(it);
      const uint64_t index = c.tag;
      c.tag = f.tag;
      if (index == plan_.fail_request && c.error == 0) {
        ++injected_;
        if (plan_.short_completion) {
          c.pages_done = std::min(c.pages_done, f.pages / 2);
          c.failed_page = f.page + c.pages_done;
        } else {
          c.error = plan_.error;
          c.pages_done = 0;
          c.failed_page = f.page;
        }
      }
      const bool failed = c.error != 0 || c.pages_done < f.pages;
      if (failed && (!bad || c.failed_page < first_bad.failed_page)) {
        bad = true;
        first_bad = c;
      }
      done->push_back(c);
    }
    if (!inner_status.ok() && !bad) return inner_status;  // the engine itself failed
    return io::WaitStatus(bad, first_bad, name());
  }

  Status Discard(uint64_t page, uint64_t n) override { return inner_->Discard(page, n); }

  IoStats stats() const override {
    IoStats s = inner_->stats();
    s.errors += injected_;
    return s;
  }
  const DeviceLimits& limits() const override { return inner_->limits(); }

 private:
  struct Flight {
    uint64_t tag, page;
    uint32_t pages;
  };
  std::unique_ptr<IoEngine> inner_;
  FaultPlan plan_;
  uint64_t next_ = 0;  // requests submitted so far = the next request's index
  uint64_t injected_ = 0;
  std::unordered_map<uint64_t, Flight> flight_;
};

}  // namespace

std::unique_ptr<IoEngine> MakeFaultInjectingEngine(std::unique_ptr<IoEngine> inner,
                                                   FaultPlan plan) {
  return std::make_unique<FaultInjectingEngine>(std::move(inner), plan);
}

}  // namespace swaplab::area
