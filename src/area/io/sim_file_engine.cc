// SPDX-License-Identifier: MIT
// The simulated device's clock over a real file (io_engine.h,
// OpenSimulatedFileEngine): the POSIX engine carries the bytes, a simulated
// device that stores nothing is handed the same requests and keeps time.
#include <memory>
#include <vector>

#include "swaplab/alloc/types.h"
#include "swaplab/area/io_engine.h"

namespace swaplab::area {
namespace {

constexpr size_t kPage = alloc::kPageSize;

class SimFileEngine final : public IoEngine {
 public:
  SimFileEngine(std::unique_ptr<IoEngine> file, std::unique_ptr<IoEngine> model)
      : file_(std::move(file)), model_(std::move(model)) {}

  std::string name() const override { return "simulated(" + file_->name() + ")"; }
  std::string description() const override {
    return "the simulated device's time over " + file_->description();
  }
  bool modelled() const override { return true; }

  // The model sees the same pages, directions and tags; its buffers are one
  // scratch page (it stores nothing, and its reads only zero the buffer).
  Status Submit(std::span<IoRequest> batch) override {
    if (Status st = file_->Submit(batch); !st.ok()) return st;
    std::vector<IoRequest> mirror(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      mirror[i].write = batch[i].write;
      mirror[i].page = batch[i].page;
      mirror[i].tag = batch[i].tag;
      mirror[i].bufs.assign(batch[i].bufs.size(), scratch_);
    }
    return model_->Submit(mirror);
  }

  Status Wait(std::vector<IoCompletion>* done) override {
    Status st = file_->Wait(done);
    std::vector<IoCompletion> timed;
    (void)model_->Wait(&timed);  // the model's completions only carry time
    return st;
  }

  Status Discard(uint64_t page, uint64_t n) override { return file_->Discard(page, n); }

  IoStats stats() const override {
    IoStats s = file_->stats();
    s.modelled_ns = model_->stats().modelled_ns;
    return s;
  }
  const DeviceLimits& limits() const override { return file_->limits(); }

 private:
  std::unique_ptr<IoEngine> file_, model_;
  alignas(kPage) std::byte scratch_page_[kPage]{};
  std::byte* const scratch_ = scratch_page_;
};

}  // namespace

Result<std::unique_ptr<IoEngine>> OpenSimulatedFileEngine(const std::string& path, EngineOptions o,
                                                          SimModel m) {
  auto file = OpenPosixEngine(path, o);
  if (!file.ok()) return file.status();
  m.pages = 0;  // the file checks the range; the model only keeps time
  m.store_checksums = false;
  m.store_data = false;
  return std::unique_ptr<IoEngine>(
      new SimFileEngine(std::move(file).value(), MakeSimulatedEngine(m, o)));
}

}  // namespace swaplab::area
