// SPDX-License-Identifier: MIT
// The v1 swap header and the swsusp overlay (hibernation spec §1.1, §1.3,
// §1.4): encoding, decoding, and one test per refusal of the swapon checks.
#include "swaplab/area/swap_header.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace swaplab::area {
namespace {

using ::testing::HasSubstr;
using Page = std::array<std::byte, kPageSize>;

constexpr std::array<uint8_t, 16> kUuid = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                           0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};

uint32_t U32(const Page& p, size_t off) {
  uint32_t v;
  std::memcpy(&v, p.data() + off, 4);
  return v;
}
void PutU32(Page& p, size_t off, uint32_t v) { std::memcpy(p.data() + off, &v, 4); }
void PutU64(Page& p, size_t off, uint64_t v) { std::memcpy(p.data() + off, &v, 8); }
void PutBytes(Page& p, size_t off, const char* s, size_t n) { std::memcpy(p.data() + off, s, n); }

SwapHeaderV1 Header(uint32_t last_page, std::vector<uint32_t> bad = {}) {
  SwapHeaderV1 h;
  h.last_page = last_page;
  h.bad_pages = std::move(bad);
  h.uuid = kUuid;
  h.label = "swaplab";
  return h;
}

// The refusal is −EINVAL and its message contains every one of `parts`.
void ExpectRefused(const Status& s, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), -EINVAL);
  for (const char* p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

TEST(SwapHeader, EncodeLayoutMatchesTheSpecTable) {
  const Page p = EncodeHeader(Header(255, {3, 7}));
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(p[i], std::byte{0}) << "bootbits byte " << i;
  EXPECT_EQ(U32(p, 1024), 1u);    // version
  EXPECT_EQ(U32(p, 1028), 255u);  // last_page
  EXPECT_EQ(U32(p, 1032), 2u);    // nr_badpages
  EXPECT_EQ(std::memcmp(p.data() + 1036, kUuid.data(), 16), 0);
  EXPECT_EQ(std::memcmp(p.data() + 1052, "swaplab\0\0\0\0\0\0\0\0\0", 16), 0);
  for (size_t i = 1068; i < 1536; ++i) ASSERT_EQ(p[i], std::byte{0}) << "padding byte " << i;
  EXPECT_EQ(U32(p, 1536), 3u);
  EXPECT_EQ(U32(p, 1540), 7u);
  for (size_t i = 1544; i < 4086; ++i) ASSERT_EQ(p[i], std::byte{0}) << "byte " << i;
  EXPECT_EQ(std::memcmp(p.data() + 4086, "SWAPSPACE2", 10), 0);
}

TEST(SwapHeader, RoundTrip) {
  const SwapHeaderV1 h = Header(1000, {1, 500, 1000});
  const DecodedHeader d = DecodeHeader(EncodeHeader(h));
  EXPECT_EQ(d.signature, Signature::kSwapSpace2);
  EXPECT_FALSE(d.byte_swapped);
  EXPECT_EQ(d.v1.version, 1u);
  EXPECT_EQ(d.v1.last_page, 1000u);
  EXPECT_EQ(d.nr_badpages, 3u);
  EXPECT_EQ(d.v1.bad_pages, h.bad_pages);
  EXPECT_EQ(d.v1.uuid, kUuid);
  EXPECT_EQ(d.v1.label, "swaplab");
  EXPECT_FALSE(d.hibernation.has_value());
  EXPECT_TRUE(ValidateForSwapon(d, 1001 * kPageSize, /*regular_file=*/false).ok());
}

TEST(SwapHeader, EncodeCutsTheLabelTo15BytesAndANul) {
  SwapHeaderV1 h = Header(100);
  h.label = "0123456789abcdefXYZ";  // mkswap: "Label was truncated"
  const Page p = EncodeHeader(h);
  EXPECT_EQ(std::memcmp(p.data() + 1052, "0123456789abcde\0", 16), 0);
  EXPECT_EQ(DecodeHeader(p).v1.label, "0123456789abcde");
}

TEST(SwapHeader, DecodeReadsAnUnterminated16ByteLabel) {
  Page p = EncodeHeader(Header(100));
  PutBytes(p, 1052, "0123456789abcdef", 16);  // as the kernel and blkid allow
  EXPECT_EQ(DecodeHeader(p).v1.label, "0123456789abcdef");
}

TEST(SwapHeader, MaxBadPagesIs637AndFillsUpToTheSignature) {
  std::vector<uint32_t> bad;
  for (uint32_t i = 1; i <= kMaxSwapBadpages; ++i) bad.push_back(i);
  const Page p = EncodeHeader(Header(4000, bad));
  EXPECT_EQ(U32(p, 1536 + 4 * 636), 637u);  // bytes 4080..4083
  EXPECT_EQ(std::memcmp(p.data() + 4086, "SWAPSPACE2", 10), 0);
  const DecodedHeader d = DecodeHeader(p);
  EXPECT_EQ(d.v1.bad_pages.size(), 637u);
  EXPECT_TRUE(ValidateForSwapon(d, 4001 * kPageSize, false).ok());
}

TEST(SwapHeader, ByteSwappedHeaderIsFixedUpAndAccepted) {
  Page p = EncodeHeader(Header(300, {9}));
  PutU32(p, 1024, __builtin_bswap32(1));
  PutU32(p, 1028, __builtin_bswap32(300));
  PutU32(p, 1032, __builtin_bswap32(1));
  PutU32(p, 1536, __builtin_bswap32(9));
  const DecodedHeader d = DecodeHeader(p);
  EXPECT_TRUE(d.byte_swapped);
  EXPECT_EQ(d.v1.version, 1u);
  EXPECT_EQ(d.v1.last_page, 300u);
  EXPECT_EQ(d.nr_badpages, 1u);
  EXPECT_EQ(d.v1.bad_pages, std::vector<uint32_t>{9});
  EXPECT_EQ(d.v1.uuid, kUuid);  // byte arrays are never swapped
  EXPECT_TRUE(ValidateForSwapon(d, 301 * kPageSize, false).ok());
}

TEST(SwapHeader, SuspendOverlayDecodes) {
  Page p = EncodeHeader(Header(511));
  PutU32(p, 4056, 0xfac5);
  PutU32(p, 4060, 0xdeadbeef);
  PutU64(p, 4064, 123456789012ull);
  PutU32(p, 4072, 4 | 16);
  PutBytes(p, 4076, "SWAPSPACE2", 10);
  PutBytes(p, 4086, "S1SUSPEND\0", 10);
  const DecodedHeader d = DecodeHeader(p);
  EXPECT_EQ(d.signature, Signature::kSuspend);
  ASSERT_TRUE(d.hibernation.has_value());
  EXPECT_EQ(d.hibernation->hw_sig, 0xfac5u);
  EXPECT_EQ(d.hibernation->crc32, 0xdeadbeefu);
  EXPECT_EQ(d.hibernation->image, 123456789012ull);
  EXPECT_EQ(d.hibernation->flags, 20u);
  EXPECT_EQ(std::memcmp(d.hibernation->orig_sig.data(), "SWAPSPACE2", 10), 0);
  // The v1 fields survive under the overlay.
  EXPECT_EQ(d.v1.last_page, 511u);
  EXPECT_EQ(d.v1.label, "swaplab");
}

TEST(SwapHeader, SignatureNames) {
  EXPECT_STREQ(Name(Signature::kSwapSpace2), "SWAPSPACE2");
  EXPECT_STREQ(Name(Signature::kSwapSpaceV0), "SWAP-SPACE");
  EXPECT_STREQ(Name(Signature::kSuspend), "S1SUSPEND");
  EXPECT_STREQ(Name(Signature::kZeros), "zeros");
}

// ---- one test per refusal (hibernation spec §1.3) -------------------------

TEST(SwaponRefuses, ZeroSignature) {
  const Page p{};
  const DecodedHeader d = DecodeHeader(p);
  EXPECT_EQ(d.signature, Signature::kZeros);
  ExpectRefused(ValidateForSwapon(d, 100 * kPageSize, true), {"signature", "zeros"});
}

TEST(SwaponRefuses, ObsoleteV0Signature) {
  Page p = EncodeHeader(Header(99));
  PutBytes(p, 4086, "SWAP-SPACE", 10);
  const DecodedHeader d = DecodeHeader(p);
  EXPECT_EQ(d.signature, Signature::kSwapSpaceV0);
  ExpectRefused(ValidateForSwapon(d, 100 * kPageSize, true), {"signature", "SWAP-SPACE", "v0"});
}

TEST(SwaponRefuses, HibernationSignature) {
  Page p = EncodeHeader(Header(99));
  PutBytes(p, 4076, "SWAPSPACE2", 10);
  PutBytes(p, 4086, "S1SUSPEND\0", 10);
  ExpectRefused(ValidateForSwapon(DecodeHeader(p), 100 * kPageSize, true),
                {"signature", "S1SUSPEND", "hibernation image"});
}

TEST(SwaponRefuses, UnknownSignatureIsShown) {
  Page p = EncodeHeader(Header(99));
  PutBytes(p, 4086, "XFSB\x01\x02zzzz", 10);
  const DecodedHeader d = DecodeHeader(p);
  EXPECT_EQ(d.signature, Signature::kUnknown);
  ExpectRefused(ValidateForSwapon(d, 100 * kPageSize, true), {"signature", "XFSB\\x01\\x02zzzz"});
}

TEST(SwaponRefuses, UnsupportedVersion) {
  SwapHeaderV1 h = Header(99);
  h.version = 2;
  ExpectRefused(ValidateForSwapon(DecodeHeader(EncodeHeader(h)), 100 * kPageSize, true),
                {"version", "2"});
}

TEST(SwaponRefuses, EmptyArea) {
  ExpectRefused(ValidateForSwapon(DecodeHeader(EncodeHeader(Header(0))), 100 * kPageSize, true),
                {"last_page", "0"});
}

TEST(SwaponRefuses, LastPageBeyondTheFile) {
  ExpectRefused(ValidateForSwapon(DecodeHeader(EncodeHeader(Header(300))), 256 * kPageSize, true),
                {"last_page", "300", "256"});
}

TEST(SwaponRefuses, LastPageBeyondTheDevice) {
  ExpectRefused(ValidateForSwapon(DecodeHeader(EncodeHeader(Header(300))), 256 * kPageSize, false),
                {"last_page", "300", "device", "256"});
}

TEST(SwaponRefuses, FileSizeNotAWholeNumberOfPages) {
  ExpectRefused(
      ValidateForSwapon(DecodeHeader(EncodeHeader(Header(99))), 100 * kPageSize + 512, true),
      {"size", "410112", "whole number"});
}

TEST(SwaponAccepts, DeviceLongerThanTheHeaderSays) {
  // A partial trailing page on a block device is ignored, as the kernel does.
  EXPECT_TRUE(
      ValidateForSwapon(DecodeHeader(EncodeHeader(Header(99))), 200 * kPageSize + 512, false).ok());
}

TEST(SwaponRefuses, BadPagesOnARegularFile) {
  ExpectRefused(
      ValidateForSwapon(DecodeHeader(EncodeHeader(Header(99, {5}))), 100 * kPageSize, true),
      {"nr_badpages", "1", "swap file"});
}

TEST(SwaponRefuses, TooManyBadPages) {
  Page p = EncodeHeader(Header(5000));
  PutU32(p, 1032, 638);
  const DecodedHeader d = DecodeHeader(p);
  EXPECT_EQ(d.nr_badpages, 638u);
  EXPECT_EQ(d.v1.bad_pages.size(), 637u);
  ExpectRefused(ValidateForSwapon(d, 5001 * kPageSize, false), {"nr_badpages", "638", "637"});
}

TEST(SwaponRefuses, BadPageZero) {
  ExpectRefused(
      ValidateForSwapon(DecodeHeader(EncodeHeader(Header(99, {4, 0}))), 100 * kPageSize, false),
      {"badpages[1]", ": 0", "[1, last_page = 99]"});
}

TEST(SwaponRefuses, BadPageBeyondLastPage) {
  ExpectRefused(
      ValidateForSwapon(DecodeHeader(EncodeHeader(Header(99, {100}))), 100 * kPageSize, false),
      {"badpages[0]", "100", "last_page = 99"});
}

TEST(SwaponRefuses, DuplicateBadPage) {
  ExpectRefused(
      ValidateForSwapon(DecodeHeader(EncodeHeader(Header(99, {7, 8, 7}))), 100 * kPageSize, false),
      {"badpages[2]", "7", "twice", "badpages[0]"});
}

TEST(SwaponRefuses, NoUsablePageLeft) {
  ExpectRefused(
      ValidateForSwapon(DecodeHeader(EncodeHeader(Header(2, {1, 2}))), 3 * kPageSize, false),
      {"nr_badpages", "no usable page"});
}

// ---- UUIDs ----------------------------------------------------------------

TEST(Uuid, FormatAndParse) {
  EXPECT_EQ(UuidToString(kUuid), "01234567-89ab-cdef-fedc-ba9876543210");
  auto u = ParseUuid("01234567-89AB-cdef-fedc-ba9876543210");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(*u, kUuid);
  auto bare = ParseUuid("0123456789abcdeffedcba9876543210");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(*bare, kUuid);
}

TEST(Uuid, ParseRejectsMalformed) {
  for (const char* bad : {"", "0123", "01234567-89ab-cdef-fedc-ba987654321g",
                          "01234567+89ab-cdef-fedc-ba9876543210"}) {
    auto u = ParseUuid(bad);
    EXPECT_FALSE(u.ok()) << bad;
    EXPECT_EQ(u.status().code(), -EINVAL);
    EXPECT_THAT(u.status().message(), HasSubstr("uuid"));
  }
}

}  // namespace
}  // namespace swaplab::area
