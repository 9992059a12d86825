// SPDX-License-Identifier: MIT
// `swaplab image read|inspect AREA`: any hibernation image, the kernel's or
// swaplab's (hibernation spec §1.4, §3.3, §4.8, §7, §10), read-only unless
// --consume.
#include "swaplab/workload/image_read.h"

#include <fmt/core.h>

#include "image.h"
#include "progress.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/types.h"
#include "swaplab/report/image_report.h"

namespace swaplab::tools {

namespace {

// 1: the image (or the area) failed a check or could not be read;
// 2: the command line was wrong or the path cannot be used at all.
int Fail(const Status& st, const char* what, int code) {
  fmt::print(stderr, "swaplab image {}: {}\n", what, Printable(st.ToString(), kPathMax));
  return code;
}

}  // namespace

int RunImageReadInspect(const ImageCommands& c, const ImageOptions& o) {
  const bool inspect = c.inspect->parsed();
  const char* what = inspect ? "inspect" : "read";
  auto capacity = hibernate::ParseCapacityMode(o.bio_capacity);
  auto batch_mode = hibernate::ParseBatchMode(o.batch);
  if (!capacity.ok()) return Fail(capacity.status(), what, 2);
  if (!batch_mode.ok()) return Fail(batch_mode.status(), what, 2);
  // Stream pages read, as bytes of the image (inspect reads none).
  ProgressBar bar(inspect ? "never" : o.progress, 0, "pages", ProgressBar::Unit::kBytes);
  workload::ImageReadStep step;
  auto r = workload::ReadImageOnArea({o.area,
                                      inspect,
                                      {*batch_mode, *capacity, o.max_pages},
                                      o.threads,
                                      o.consume,
                                      o.kernel_io,
                                      o.dump,
                                      [&bar](uint64_t done, uint64_t total) {
                                        bar.SetTotal(total * alloc::kPageSize);
                                        bar.Update(done * alloc::kPageSize, "image read");
                                      },
                                      o.io},
                                     &step);
  bar.End();
  if (!r.ok()) {
    const Status& st = r.status();
    switch (step) {
      case workload::ImageReadStep::kLock:
        return Fail(st, what, st.code() == -EBUSY ? 1 : 2);
      case workload::ImageReadStep::kRead:
        return Fail(st, what, 1);
      default:
        return Fail(st, what, 2);
    }
  }
  if (o.json) {
    fmt::print("{}\n", report::ImageReadJson(*r).dump(2));
  } else {
    fmt::print("{}", report::ImageReadText(*r));
  }
  return 0;
}

}  // namespace swaplab::tools
