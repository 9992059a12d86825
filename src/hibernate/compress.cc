// Compressors, CRC32 and worker threads of the compressed image path
// (spec §7.1, §7.2, §7.5, §7.7).
#include "swaplab/hibernate/compress.h"

#include <lz4.h>
#include <lzo1x.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

namespace swaplab::hibernate {

Result<Compressor> ParseCompressor(std::string_view s) {
  if (s == "none") return Compressor::kNone;
  if (s == "lzo") return Compressor::kLzo;
  if (s == "lz4") return Compressor::kLz4;
  return Status(-EINVAL, "compressor '" + std::string(s) + "': expected none, lzo or lz4");
}

const char* Name(Compressor c) {
  switch (c) {
    case Compressor::kNone: return "none";
    case Compressor::kLzo: return "lzo";
    case Compressor::kLz4: return "lz4";
  }
  return "?";
}

Compressor CompressorFromFlags(uint32_t flags) {
  if (flags & kSfNocompressMode) return Compressor::kNone;
  return (flags & kSfCompressionAlgLz4) ? Compressor::kLz4 : Compressor::kLzo;
}

uint32_t FlagsFor(Compressor c) {
  switch (c) {
    case Compressor::kNone: return kSfNocompressMode;
    case Compressor::kLzo: return kSfCrc32Mode;  // SF_COMPRESSION_ALG_LZO is 0
    case Compressor::kLz4: return kSfCrc32Mode | kSfCompressionAlgLz4;
  }
  return 0;
}

unsigned DefaultCompressionThreads() {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp(cpus - 1, 1u, 3u);  // hibernate_compression_threads default 3
}

uint32_t Crc32Le(uint32_t crc, const std::byte* p, size_t n) {
  uLong z = ~crc & 0xffffffffu;
  while (n > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, std::numeric_limits<uInt>::max()));
    z = crc32(z, reinterpret_cast<const Bytef*>(p), chunk);
    p += chunk;
    n -= chunk;
  }
  return ~static_cast<uint32_t>(z);
}

namespace {
bool LzoReady() {
  static const bool ok = lzo_init() == LZO_E_OK;
  return ok;
}
}  // namespace

Result<size_t> CompressBlock(Compressor c, std::span<const std::byte> in, std::span<std::byte> out) {
  if (out.size() < WorstCompress(in.size()))
    return Status(-EINVAL, "compress: output buffer of " + std::to_string(out.size()) + " bytes is below the worst case " +
                               std::to_string(WorstCompress(in.size())));
  if (c == Compressor::kLzo) {
    if (!LzoReady()) return Status(-EINVAL, "lzo_init failed");
    thread_local std::unique_ptr<unsigned char[]> wrk(new unsigned char[LZO1X_1_MEM_COMPRESS]);
    lzo_uint len = out.size();
    const int rc = lzo1x_1_compress(reinterpret_cast<const unsigned char*>(in.data()), in.size(),
                                    reinterpret_cast<unsigned char*>(out.data()), &len, wrk.get());
    if (rc != LZO_E_OK) return Status(-EINVAL, "lzo1x_1_compress failed: " + std::to_string(rc));
    return static_cast<size_t>(len);
  }
  if (c == Compressor::kLz4) {
    const int len = LZ4_compress_default(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                         static_cast<int>(in.size()), static_cast<int>(out.size()));
    if (len <= 0) return Status(-EINVAL, "LZ4_compress_default failed");
    return static_cast<size_t>(len);
  }
  return Status(-EINVAL, "compress: no compressor");
}

Result<size_t> DecompressBlock(Compressor c, std::span<const std::byte> in, std::span<std::byte> out) {
  if (c == Compressor::kLzo) {
    if (!LzoReady()) return Status(-EINVAL, "lzo_init failed");
    lzo_uint len = out.size();
    const int rc = lzo1x_decompress_safe(reinterpret_cast<const unsigned char*>(in.data()), in.size(),
                                         reinterpret_cast<unsigned char*>(out.data()), &len, nullptr);
    if (rc != LZO_E_OK) return Status(-EINVAL, "lzo1x_decompress_safe: malformed block (error " + std::to_string(rc) + ")");
    return static_cast<size_t>(len);
  }
  if (c == Compressor::kLz4) {
    const int len = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                        static_cast<int>(in.size()), static_cast<int>(out.size()));
    if (len < 0) return Status(-EINVAL, "LZ4_decompress_safe: malformed block");
    return static_cast<size_t>(len);
  }
  return Status(-EINVAL, "decompress: no compressor");
}

WorkerThread::WorkerThread() : t_([this] { Loop(); }) {}

WorkerThread::~WorkerThread() {
  {
    std::unique_lock l(mu_);
    cv_.wait(l, [this] { return done_; });
    stop_ = true;
  }
  cv_.notify_all();
  t_.join();
}

void WorkerThread::Go(std::function<void()> job) {
  {
    std::lock_guard l(mu_);
    job_ = std::move(job);
    go_ = true;
    done_ = false;
  }
  cv_.notify_all();
}

void WorkerThread::Wait() {
  std::unique_lock l(mu_);
  cv_.wait(l, [this] { return done_; });
}

bool WorkerThread::busy() const {
  std::lock_guard l(mu_);
  return !done_;
}

void WorkerThread::Loop() {
  std::unique_lock l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return go_ || stop_; });
    if (stop_) return;
    go_ = false;
    auto job = std::move(job_);
    l.unlock();
    job();
    l.lock();
    done_ = true;
    cv_.notify_all();
  }
}

ImageThreads::ImageThreads(unsigned nr) {
  if (nr == 0) nr = DefaultCompressionThreads();
  for (unsigned i = 0; i < nr; ++i) workers.push_back(std::make_unique<WorkerThread>());
}

}  // namespace swaplab::hibernate
