// SPDX-License-Identifier: MIT
// The compressed image path's building blocks (spec §7): the 32-page unit
// with its 8-byte length header, the kernel's worst-case bound, the two
// block compressors (LZO1X-1 through liblzo2, LZ4 through liblz4, §7.7),
// the kernel's CRC32 (§7.5), and the worker threads of §7.2 (compressor /
// decompressor threads and the CRC thread, each told to go and waited for
// by the main thread in a fixed order).
#pragma once
#pragma GCC visibility push(default)

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/hibernate/image_format.h"

namespace swaplab::hibernate {

enum class Compressor { kNone, kLzo, kLz4 };
Result<Compressor> ParseCompressor(std::string_view s);  // "none" | "lzo" | "lz4"
const char* Name(Compressor c);
// Which compressor an image uses, from the swsusp_header flags, as
// swsusp_check() / software_resume() decide (§1.4): SF_NOCOMPRESS_MODE →
// none; otherwise lz4 if SF_COMPRESSION_ALG_LZ4, else lzo.
Compressor CompressorFromFlags(uint32_t flags);
// The flags the writer stores for `c` (§1.4, §7.3): none → SF_NOCOMPRESS_MODE;
// lzo → SF_CRC32_MODE; lz4 → SF_CRC32_MODE | SF_COMPRESSION_ALG_LZ4.
uint32_t FlagsFor(Compressor c);

// §7.1 constants (UNC_PAGES, UNC_SIZE, CMP_HEADER, CMP_PAGES, CMP_SIZE).
inline constexpr uint64_t kUncPages = 32;
inline constexpr uint64_t kUncSize = kUncPages * kPageSize;  // 131 072
inline constexpr uint64_t kCmpHeader = 8;
// bytes_worst_compress(x) = x + x/16 + 64 + 3 + 2.
inline constexpr uint64_t WorstCompress(uint64_t x) { return x + x / 16 + 64 + 3 + 2; }
inline constexpr uint64_t kCmpPages =
    (WorstCompress(kUncSize) + kCmpHeader + kPageSize - 1) / kPageSize;  // 35
inline constexpr uint64_t kCmpSize = kCmpPages * kPageSize;              // 143 360
static_assert(kCmpPages == 35);
// The read ring (CMP_MIN_RD_PAGES, CMP_MAX_RD_PAGES).
inline constexpr uint64_t kCmpMinRdPages = 1024, kCmpMaxRdPages = 8192;
// Default worker count (§7.1): clamp(online CPUs − 1, 1, 3).
unsigned DefaultCompressionThreads();

// The kernel's crc32_le(crc, p, n) (§7.5): reflected 0xEDB88320, no
// inversions; by carry-less folding where the CPU has PCLMULQDQ (x86-64),
// else with zlib as ~zlib_crc32(~crc, p, n).
uint32_t Crc32Le(uint32_t crc, const std::byte* p, size_t n);

// One raw block (no header of its own, §7.7). Compress: `out` must hold
// WorstCompress(in.size()) bytes; returns L. Decompress: returns the output
// length; -EINVAL on a malformed block or one that does not fit `out`.
Result<size_t> CompressBlock(Compressor c, std::span<const std::byte> in, std::span<std::byte> out);
Result<size_t> DecompressBlock(Compressor c, std::span<const std::byte> in,
                               std::span<std::byte> out);

// A thread that sleeps until given a job, runs it, and reports done: the
// kernel's go/done flags and wait queues of one image_compress/N,
// image_decompress/N or image_crc32 thread (§7.2).
class WorkerThread {
 public:
  WorkerThread();
  ~WorkerThread();  // stops the thread after its current job
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  // Hands over a job; the worker must be idle (Wait was called since).
  void Go(std::function<void()> job);
  // Waits until the job given by the last Go has run (no-op when idle).
  void Wait();
  bool busy() const;

 private:
  void Loop();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool go_ = false, done_ = true, stop_ = false;
  std::thread t_;
};

// One image's threads (§7.2): `nr` compressor or decompressor workers
// (0: DefaultCompressionThreads()) and the CRC thread.
struct ImageThreads {
  explicit ImageThreads(unsigned nr);
  unsigned nr() const { return static_cast<unsigned>(workers.size()); }
  std::vector<std::unique_ptr<WorkerThread>> workers;
  WorkerThread crc;
};

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
