// SPDX-License-Identifier: MIT
// Compressors, CRC32 and worker threads of the compressed image path
// (spec §7.1, §7.2, §7.5, §7.7).
#include "swaplab/hibernate/compress.h"

#include <lz4.h>
#include <lzo1x.h>
#include <zlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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
    case Compressor::kNone:
      return "none";
    case Compressor::kLzo:
      return "lzo";
    case Compressor::kLz4:
      return "lz4";
  }
  return "?";
}

Compressor CompressorFromFlags(uint32_t flags) {
  if (flags & kSfNocompressMode) return Compressor::kNone;
  return (flags & kSfCompressionAlgLz4) ? Compressor::kLz4 : Compressor::kLzo;
}

uint32_t FlagsFor(Compressor c) {
  switch (c) {
    case Compressor::kNone:
      return kSfNocompressMode;
    case Compressor::kLzo:
      return kSfCrc32Mode;  // SF_COMPRESSION_ALG_LZO is 0
    case Compressor::kLz4:
      return kSfCrc32Mode | kSfCompressionAlgLz4;
  }
  return 0;
}

unsigned DefaultCompressionThreads() {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp(cpus - 1, 1u, 3u);  // hibernate_compression_threads default 3
}

namespace {

// zlib's table CRC on the raw register (zlib inverts on the way in and out).
uint32_t Crc32Zlib(uint32_t crc, const std::byte* p, size_t n) {
  uLong z = ~crc & 0xffffffffu;
  while (n > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, std::numeric_limits<uInt>::max()));
    z = crc32(z, reinterpret_cast<const Bytef*>(p), chunk);
    p += chunk;
    n -= chunk;
  }
  return ~static_cast<uint32_t>(z);
}

#if defined(__x86_64__)
// The same CRC by folding with carry-less multiplication (PCLMULQDQ), the
// method of Gopal et al., "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ Instruction" (Intel, 2009). The raw register r over a
// message equals the register 0 over the message with r XORed into its
// first four bytes. A 16-byte chunk A lying D bits before a chunk B of the
// message can then be dropped and B replaced by B ⊕ A.lo·K_lo(D) ⊕
// A.hi·K_hi(D) (64 × 33-bit carry-less products), which leaves the CRC
// unchanged; K_lo(D), K_hi(D) are x^(D+32) and x^(D−32) mod P, bit-
// reflected and shifted left by one. Four chunks are folded 512 bits
// ahead, then into one, then 16 bytes at a time; the last 16-byte chunk and
// the tail (< 16 bytes) go through the table CRC. tests/hibernate/
// compressed_test.cc checks it against a bitwise CRC at every length.
struct FoldConstants {
  uint64_t lo, hi;
};
constexpr FoldConstants kFold512{0x154442bd4, 0x1c6e41596};
constexpr FoldConstants kFold128{0x1751997d0, 0x0ccaa009e};

__attribute__((target("pclmul,sse2"))) inline __m128i Fold(__m128i a, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

__attribute__((target("pclmul,sse2"))) uint32_t Crc32Fold(uint32_t crc, const std::byte* p,
                                                          size_t n) {
  auto load = [](const std::byte* q) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  };
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  n -= 64;
  const __m128i k512 =
      _mm_set_epi64x(static_cast<int64_t>(kFold512.hi), static_cast<int64_t>(kFold512.lo));
  for (; n >= 64; p += 64, n -= 64) {
    x0 = _mm_xor_si128(Fold(x0, k512), load(p));
    x1 = _mm_xor_si128(Fold(x1, k512), load(p + 16));
    x2 = _mm_xor_si128(Fold(x2, k512), load(p + 32));
    x3 = _mm_xor_si128(Fold(x3, k512), load(p + 48));
  }
  const __m128i k128 =
      _mm_set_epi64x(static_cast<int64_t>(kFold128.hi), static_cast<int64_t>(kFold128.lo));
  __m128i x = _mm_xor_si128(Fold(x0, k128), x1);
  x = _mm_xor_si128(Fold(x, k128), x2);
  x = _mm_xor_si128(Fold(x, k128), x3);
  for (; n >= 16; p += 16, n -= 16) x = _mm_xor_si128(Fold(x, k128), load(p));
  alignas(16) std::byte last[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(last), x);
  return Crc32Zlib(Crc32Zlib(0, last, sizeof last), p, n);
}

bool HaveClmul() {
  static const bool yes = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2");
  return yes;
}
#endif

}  // namespace

uint32_t Crc32Le(uint32_t crc, const std::byte* p, size_t n) {
#if defined(__x86_64__)
  if (n >= 64 && HaveClmul()) return Crc32Fold(crc, p, n);
#endif
  return Crc32Zlib(crc, p, n);
}

namespace {
bool LzoReady() {
  static const bool ok = lzo_init() == LZO_E_OK;
  return ok;
}
}  // namespace

Result<size_t> CompressBlock(Compressor c, std::span<const std::byte> in,
                             std::span<std::byte> out) {
  if (out.size() < WorstCompress(in.size()))
    return Status(-EINVAL, "compress: output buffer of " + std::to_string(out.size()) +
                               " bytes is below the worst case " +
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
    const int len = LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                                         reinterpret_cast<char*>(out.data()),
                                         static_cast<int>(in.size()), static_cast<int>(out.size()));
    if (len <= 0) return Status(-EINVAL, "LZ4_compress_default failed");
    return static_cast<size_t>(len);
  }
  return Status(-EINVAL, "compress: no compressor");
}

Result<size_t> DecompressBlock(Compressor c, std::span<const std::byte> in,
                               std::span<std::byte> out) {
  if (c == Compressor::kLzo) {
    if (!LzoReady()) return Status(-EINVAL, "lzo_init failed");
    lzo_uint len = out.size();
    const int rc =
        lzo1x_decompress_safe(reinterpret_cast<const unsigned char*>(in.data()), in.size(),
                              reinterpret_cast<unsigned char*>(out.data()), &len, nullptr);
    if (rc != LZO_E_OK)
      return Status(-EINVAL,
                    "lzo1x_decompress_safe: malformed block (error " + std::to_string(rc) + ")");
    return static_cast<size_t>(len);
  }
  if (c == Compressor::kLz4) {
    const int len = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()),
                                        reinterpret_cast<char*>(out.data()),
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
