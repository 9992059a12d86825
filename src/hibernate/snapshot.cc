// SPDX-License-Identifier: MIT
// Synthetic snapshot stream (spec §3.2-§3.4).
#include "swaplab/hibernate/snapshot.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "swaplab/alloc/types.h"

namespace swaplab::hibernate {
namespace {

using alloc::SplitMix64Hash;

constexpr uint64_t kZeroFlag = uint64_t{1} << 63;
constexpr uint64_t kEndOfMap = ~uint64_t{0};
constexpr char kTag[] = "swaplab-synthetic-1";
constexpr size_t kTagOptions = 64;     // options live in uts after the tag
constexpr size_t kNoiseWords = 32768;  // 256 KiB

double Unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }
uint32_t Ppm(double share) { return static_cast<uint32_t>(share * 1e6 + 0.5); }

}  // namespace

Result<SyntheticSnapshot> SyntheticSnapshot::Make(const SnapshotOptions& o) {
  if (o.saveable_pages == 0) return Status(-EINVAL, "snapshot: saveable_pages must be > 0");
  if (!(o.zero_share >= 0 && o.compressible_share >= 0 && o.zero_share + o.compressible_share <= 1))
    return Status(-EINVAL,
                  "snapshot: zero_share and compressible_share must be in [0,1] and sum to <= 1");
  if (o.first_pfn == 0 || o.first_pfn >= (uint64_t{1} << 40))
    return Status(-EINVAL, "snapshot: first_pfn must be in [1, 2^40)");
  SnapshotOptions q = o;  // shares are stored as ppm in the info page
  q.zero_share = Ppm(o.zero_share) / 1e6;
  q.compressible_share = Ppm(o.compressible_share) / 1e6;
  return SyntheticSnapshot(q);
}

SyntheticSnapshot::SyntheticSnapshot(const SnapshotOptions& o) : o_(o) {
  meta_ = MetaPages(o.saveable_pages);
  noise_ = std::make_shared<Noise>(o.seed);
  pfns_.reserve(o.saveable_pages);
  uint64_t pfn = o.first_pfn;
  for (uint64_t i = 0; i < o.saveable_pages; ++i) {
    const uint64_t h = SplitMix64Hash(o.seed ^ SplitMix64Hash(i));
    if ((h & 7) == 0) pfn += 1 + ((h >> 3) & 15);  // holes in the PFN layout
    const uint64_t k = SplitMix64Hash(o.seed * 31 + pfn);
    if (Unit(k) < o.zero_share) {
      pfns_.push_back(pfn | kZeroFlag);
      ++zero_pages_;
    } else {
      pfns_.push_back(pfn);
    }
    ++pfn;
  }
  if (zero_pages_ == 0) return;
  data_pfns_.reserve(pfns_.size() - zero_pages_);
  for (uint64_t f : pfns_)
    if ((f & kZeroFlag) == 0) data_pfns_.push_back(f);
}

struct SyntheticSnapshot::Noise {
  explicit Noise(uint64_t s) : seed(s) {}
  const uint64_t seed;
  std::once_flag made;
  std::vector<uint64_t> words;
};

const uint64_t* SyntheticSnapshot::NoiseWords() const {
  Noise& z = *noise_;
  std::call_once(z.made, [&z] {
    z.words.resize(kNoiseWords);
    for (size_t i = 0; i < kNoiseWords; ++i)
      z.words[i] = SplitMix64Hash(z.seed * 0x2545f4914f6cdd1dULL + i);
  });
  return z.words.data();
}

void SyntheticSnapshot::ShareNoise(const std::shared_ptr<Noise>& n) {
  if (n != nullptr && n->seed == o_.seed) noise_ = n;
}

void SyntheticSnapshot::DataPage(uint64_t pfn, std::byte* out) const {
  const uint64_t k = SplitMix64Hash(o_.seed * 31 + pfn);
  StoreU64(out, pfn);
  StoreU64(out + 8, o_.seed);
  if (Unit(k) < o_.zero_share + o_.compressible_share) {
    uint64_t pat[8];
    for (int i = 0; i < 8; ++i)
      pat[i] = SplitMix64Hash(k + static_cast<uint64_t>(i)) & 0x0f0f0f0f0f0f0f0fULL;
    for (size_t off = 16; off < kPageSize; off += 8) StoreU64(out + off, pat[(off / 8) % 8]);
  } else {  // a slice of the noise, XORed with a key of the page's own: no
            // repeats inside the page and none between pages (different
            // keys), so LZO / LZ4 find nothing; about memcpy speed
    const uint64_t key = SplitMix64Hash(k ^ 0x5bd1e9955bd1e995ULL) | 1;
    const uint64_t* src = NoiseWords() + (k % (kNoiseWords - kPageSize / 8));
    for (size_t i = 2; i < kPageSize / 8; ++i) StoreU64(out + 8 * i, src[i] ^ key);
  }
}

void SyntheticSnapshot::StreamPage(uint64_t p, std::byte* out) const {
  if (mem_) {
    std::memcpy(out, mem_.get() + p * kPageSize, kPageSize);
    return;
  }
  Generate(p, out);
}

Status SyntheticSnapshot::Materialize() {
  if (mem_) return Status::Ok();
  const uint64_t bytes = image_pages() * kPageSize;
  void* m = std::aligned_alloc(kPageSize, bytes);
  if (m == nullptr)
    return Status(-ENOMEM, "snapshot: cannot materialise " + std::to_string(image_pages()) +
                               " pages (" + std::to_string(bytes >> 20) + " MiB)");
  std::shared_ptr<std::byte[]> mem(static_cast<std::byte*>(m), [](std::byte* q) { std::free(q); });
  for (uint64_t p = 0; p < image_pages(); ++p) Generate(p, mem.get() + p * kPageSize);
  mem_ = std::move(mem);
  return Status::Ok();
}

void SyntheticSnapshot::Generate(uint64_t p, std::byte* out) const {
  if (p > meta_) {  // a data page fills every byte
    DataPage(DataPfn(p - meta_ - 1), out);
    return;
  }
  std::memset(out, 0, kPageSize);
  if (p == 0) {  // swsusp_info (§3.3); uts is a free-form tag for swaplab
    std::memcpy(out, kTag, sizeof kTag);
    StoreU64(out + kTagOptions, o_.seed);
    StoreU64(out + kTagOptions + 8, o_.saveable_pages);
    StoreU64(out + kTagOptions + 16, o_.first_pfn);
    StoreU32(out + kTagOptions + 24, Ppm(o_.zero_share));
    StoreU32(out + kTagOptions + 28, Ppm(o_.compressible_share));
    const uint64_t last = pfns_.empty() ? 0 : (pfns_.back() & ~kZeroFlag);
    StoreU64(out + kInfoNumPhyspages, last + 1);
    StoreU64(out + kInfoImagePages, nr_copy_pages());
    StoreU64(out + kInfoPages, image_pages());
    StoreU64(out + kInfoSize, image_pages() * kPageSize);
    return;
  }
  if (p <= meta_) {  // metadata (§3.4): 512 values, ~0 terminator if it ends inside
    const uint64_t first = (p - 1) * 512;
    for (uint64_t i = 0; i < 512; ++i) {
      if (first + i < pfns_.size()) {
        StoreU64(out + 8 * i, pfns_[first + i]);
      } else {
        StoreU64(out + 8 * i, kEndOfMap);
        break;
      }
    }
  }
}

bool IsSwaplabInfoPage(const std::byte* info) { return std::memcmp(info, kTag, sizeof kTag) == 0; }

Result<SyntheticSnapshot> SyntheticSnapshot::FromInfoPage(const std::byte* info,
                                                          uint64_t max_bytes) {
  if (!IsSwaplabInfoPage(info))
    return Status(-EINVAL, "swsusp_info: not a swaplab synthetic image (uts tag missing)");
  SnapshotOptions o;
  o.seed = LoadU64(info + kTagOptions);
  o.saveable_pages = LoadU64(info + kTagOptions + 8);
  o.first_pfn = LoadU64(info + kTagOptions + 16);
  o.zero_share = LoadU32(info + kTagOptions + 24) / 1e6;
  o.compressible_share = LoadU32(info + kTagOptions + 28) / 1e6;
  const uint64_t T = LoadU64(info + kInfoPages), N = LoadU64(info + kInfoImagePages);
  const uint64_t M = N < T ? T - N - 1 : 0;
  // pfns_ and data_pfns_ take up to 16 bytes per saveable page
  if (o.saveable_pages == 0 || MetaPages(o.saveable_pages) != M ||
      o.saveable_pages > max_bytes / 16)
    return Status(-EINVAL, "swsusp_info: the swaplab tag's saveable page count " +
                               std::to_string(o.saveable_pages) + " does not fit " +
                               std::to_string(M) + " metadata pages or a PFN list of at most " +
                               std::to_string(max_bytes) + " bytes");
  return Make(o);
}

}  // namespace swaplab::hibernate
