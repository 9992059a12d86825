// SPDX-License-Identifier: MIT
// What a target already holds before `area format` writes over it: the
// signatures libblkid recognises (filesystems, partition tables, RAID and
// LVM members, swap areas, hibernation images) and whether the first 64 KiB
// hold any data at all.
#include <blkid/blkid.h>
#include <fmt/core.h>

#include <algorithm>
#include <vector>

#include "area/area_internal.h"

namespace swaplab::area::internal {

namespace {

std::string Value(blkid_probe pr, const char* name) {
  const char* data = nullptr;
  size_t len = 0;
  if (blkid_probe_lookup_value(pr, name, &data, &len) != 0 || data == nullptr) return "";
  std::string s(data, len);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

Result<ExistingContent> ProbeExisting(int fd, uint64_t size_bytes, const std::string& path) {
  ExistingContent c;
  const size_t head = static_cast<size_t>(std::min<uint64_t>(size_bytes, kProbeZeroBytes));
  if (head > 0) {
    std::vector<unsigned char> buf(head);
    if (Status s = PreadAll(fd, buf.data(), head, 0, path + ": probe"); !s.ok()) return s;
    const auto it = std::find_if(buf.begin(), buf.end(), [](unsigned char b) { return b != 0; });
    if (it != buf.end()) c.first_nonzero = static_cast<uint64_t>(it - buf.begin());
  }
  if (size_bytes == 0) return c;
  blkid_probe pr = blkid_new_probe();
  if (pr == nullptr) return Status(-ENOMEM, path + ": libblkid: no probe");
  if (blkid_probe_set_device(pr, fd, 0, static_cast<blkid_loff_t>(size_bytes)) != 0) {
    blkid_free_probe(pr);
    return Status(-EIO, path + ": libblkid could not probe it");
  }
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(
      pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | BLKID_SUBLKS_USAGE);
  blkid_probe_enable_partitions(pr, 1);
  blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
  const int rc = blkid_do_safeprobe(pr);
  if (rc == -2) {
    c.recognised = c.ambiguous = true;
  } else if (rc == 0) {
    c.type = Value(pr, "TYPE");
    c.usage = Value(pr, "USAGE");
    c.label = Value(pr, "LABEL");
    c.uuid = Value(pr, "UUID");
    c.pttype = Value(pr, "PTTYPE");
    c.recognised = !c.type.empty() || !c.pttype.empty();
  }
  blkid_free_probe(pr);
  if (rc == -1) return Status(-EIO, path + ": libblkid failed to probe it");
  return c;
}

std::string Describe(const ExistingContent& c) {
  if (c.ambiguous) return "more than one signature (libblkid: ambiguous)";
  std::string what;
  if (!c.pttype.empty()) what = fmt::format("a partition table (type {})", c.pttype);
  if (!c.type.empty()) {
    if (!what.empty()) what += " and ";
    const std::string usage = c.usage.empty() ? "" : c.usage + ", ";
    what += fmt::format("{} ({}type {}", c.type == "swap" ? "a swap area" : "a signature", usage,
                        c.type);
    if (!c.label.empty()) what += fmt::format(", LABEL=\"{}\"", c.label);
    if (!c.uuid.empty()) what += fmt::format(", UUID={}", c.uuid);
    what += ")";
  }
  if (what.empty() && c.first_nonzero != UINT64_MAX)
    what = fmt::format(
        "data with no signature libblkid knows (a non-zero byte at offset {} of the first {} KiB)",
        c.first_nonzero, kProbeZeroBytes / 1024);
  return what;
}

bool ReformatWithoutForce(const ExistingContent& c) {
  if (c.ambiguous || !c.pttype.empty()) return false;
  if (c.type.empty()) return c.first_nonzero == UINT64_MAX;
  return c.type == "swap" && c.label.empty();
}

}  // namespace swaplab::area::internal
