// SPDX-License-Identifier: MIT
// `swaplab image read|inspect`'s run (image_read.h).
#include "swaplab/workload/image_read.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "swaplab/area/area_lock.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/workload/image_write.h"

namespace swaplab::workload {

namespace {

// A file the dump goes to: never one that exists (it could be the area).
struct Dump {
  std::FILE* f = nullptr;
  ~Dump() {
    if (f) std::fclose(f);
  }
};

}  // namespace

Result<ImageReadResult> ReadImageOnArea(const ImageReadOptions& o, ImageReadStep* failed) {
  ImageReadStep ignored;
  ImageReadStep& step = failed ? *failed : ignored;
  step = ImageReadStep::kOpenArea;
  auto info = area::InspectArea(o.area);
  if (!info.ok()) return info.status();
  // --consume writes: lock the area as every writer does (area_lock.h)
  step = ImageReadStep::kLock;
  auto lock = area::LockAreaIf(o.consume, o.area);
  if (!lock.ok()) return lock.status();
  step = ImageReadStep::kOpenEngine;
  area::EngineOptions eo;
  eo.limits = info->limits;
  eo.writable = o.consume;  // read-only unless the image is to be consumed
  auto engine = area::OpenEngine(o.io, o.area, eo);
  if (!engine.ok()) return engine.status();
  const uint64_t device_pages = info->size_bytes / area::kPageSize;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = ProcessCpuSeconds();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  ImageReadResult res;
  res.options = o;
  if (o.inspect) {
    step = ImageReadStep::kRead;
    auto r = hibernate::InspectImage(**engine, 0, device_pages, o.batch.capacity);
    if (!r.ok()) return r.status();
    res.inspection = std::move(r).value();
    res.seconds = seconds();
    return res;
  }
  step = ImageReadStep::kOpenDump;
  Dump dump;
  if (!o.dump.empty()) {
    dump.f = std::fopen(o.dump.c_str(), "wx");  // O_EXCL: never overwrite
    if (dump.f == nullptr)
      return Status(-errno,
                    "--dump " + o.dump + ": " + std::strerror(errno) + " (it must not exist)");
  }
  step = ImageReadStep::kRead;
  hibernate::ReaderOptions ro;
  ro.batch = o.batch;
  ro.device_pages = device_pages;
  ro.threads = o.threads;
  ro.consume = o.consume;
  ro.pipelined = !o.kernel_io;
  ro.progress = o.progress;
  if (dump.f != nullptr) {
    ro.on_page = [&](uint64_t p, const std::byte* page) {
      if (std::fwrite(page, 1, area::kPageSize, dump.f) != area::kPageSize)
        return Status(-EIO,
                      "--dump " + o.dump + ": write failed at stream page " + std::to_string(p));
      return Status::Ok();
    };
  }
  auto rep = hibernate::ReadImage(**engine, 0, ro);
  if (!rep.ok()) {
    if (dump.f != nullptr) ::unlink(o.dump.c_str());
    return rep.status();
  }
  res.read = std::move(rep).value();
  res.seconds = seconds();
  res.cpu_seconds = ProcessCpuSeconds() - cpu0;
  if (dump.f != nullptr) {
    if (std::fclose(dump.f) != 0) return Status(-EIO, "--dump " + o.dump + ": close failed");
    dump.f = nullptr;
  }
  return res;
}

}  // namespace swaplab::workload
