// SPDX-License-Identifier: MIT
// Helpers shared by the swap-area sources (not part of the contract).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_area.h"

namespace swaplab::area::internal {

// Counts extents, the largest one and whether the pages [0, pages) are not
// all covered.
ExtentSummary Summarize(const std::vector<alloc::SwapExtent>& extents, uint64_t pages);

// The first page in [0, pages) no extent covers, or `pages` when none.
uint64_t FirstHole(const std::vector<alloc::SwapExtent>& extents, uint64_t pages);

// read / write the whole buffer at `off`, retrying short transfers and
// EINTR; errors say what failed where.
Status PreadAll(int fd, void* buf, size_t n, uint64_t off, const std::string& what);
Status PwriteAll(int fd, const void* buf, size_t n, uint64_t off, const std::string& what);

// Opens a swap area without ever blocking: CheckAreaPath (regular file or
// block device, else −EINVAL / −EISDIR naming the path and its type), open
// with O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags, fstat again (the type, and
// the same file as stat saw), then O_NONBLOCK cleared. Fills *st.
Result<int> OpenAreaFd(const std::string& path, int flags, struct stat* st);

// What `area format` finds on an existing target (probe_area.cc).
inline constexpr uint64_t kProbeZeroBytes = 64 * 1024;
struct ExistingContent {
  bool recognised = false;               // libblkid found a signature
  bool ambiguous = false;                // more than one (libblkid's safe probe refused)
  std::string type, usage, label, uuid;  // superblock: TYPE, USAGE, LABEL, UUID
  std::string pttype;                    // partition table type ("dos", "gpt")
  uint64_t first_nonzero = UINT64_MAX;   // first non-zero byte in [0, 64 KiB)
};
Result<ExistingContent> ProbeExisting(int fd, uint64_t size_bytes, const std::string& path);
// "a signature (filesystem, type ext4, LABEL="x", UUID=...)", "a partition
// table (type dos)", "data with no signature ...", or "" when empty.
std::string Describe(const ExistingContent& c);
// The rule of `area format` without --force: an all-zero head with no
// signature, or a swap area without a label (swaplab's own, or mkswap's
// without -L); anything else is refused.
bool ReformatWithoutForce(const ExistingContent& c);

// −errno with "<what>: <strerror>".
Status Errno(int err, const std::string& what);

}  // namespace swaplab::area::internal
