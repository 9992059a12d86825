// SPDX-License-Identifier: MIT
// The kernel layer drives the running Linux kernel's swap: small
// helpers for procfs / sysfs, and the state file that marks what swaplab
// created so a crashed run can be cleaned up (and nothing else touched).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::kernel {

// Whole-file read of a small procfs/sysfs file (trailing newline kept).
Result<std::string> ReadSmallFile(const std::string& path);
// Writes `value` to a procfs/sysfs file in one write(2).
Status WriteSmallFile(const std::string& path, const std::string& value);
// The selected word of a sysfs choice file: "always [inherit] madvise" →
// "inherit"; a file without brackets is returned trimmed.
std::string SelectedChoice(const std::string& contents);

// One line of /proc/swaps.
struct ActiveSwap {
  std::string filename;
  std::string type;  // "file" / "partition"
  uint64_t size_kb = 0, used_kb = 0;
  int prio = 0;
  int index =
      0;  // line index: the kernel's swap type when no earlier type is free (see fidelity.md)
};
Result<std::vector<ActiveSwap>> ReadProcSwaps();

// A counter of /proc/vmstat (e.g. "nr_writeback", "pswpout").
Result<uint64_t> ReadVmstat(const std::string& key);
// Waits until no page is under writeback: /proc/vmstat nr_writeback is 0
// after folding the per-CPU counter deltas (/proc/sys/vm/stat_refresh;
// without it the global counter can read 0 while pages are still in flight),
// and every `inflight` file (sysfs <dev>/inflight) reads "0 0". false after
// `timeout_ms`.
bool WaitForWriteback(int timeout_ms, const std::vector<std::string>& inflight = {});

// mTHP counters per folio size (hugepages-<size>kB/stats), keyed by order.
struct MthpStats {
  std::map<int, uint64_t> swpout, swpout_fallback;
};
MthpStats ReadMthpStats();
// The path of hugepages-<4<<order>kB/enabled.
std::string MthpEnabledPath(int order);

// Where swaplab records what it created (one "key value..." per line).
inline constexpr const char* kStateDir = "/run/swaplab";
inline constexpr const char* kStateFile = "/run/swaplab/state";
// Every swaplab swap area carries a label with this prefix and lives in
// a file /var/tmp/swaplab-*.
inline constexpr const char* kLabelPrefix = "swaplab-";
inline constexpr const char* kAreaDir = "/var/tmp";

// The state file: created objects and saved settings, appended as they
// happen (so a crash leaves a complete record).
struct StateEntry {
  std::string kind;  // pid | file | loop | zram | swap | setting | cgroup
  std::vector<std::string> args;
};
class StateFile {
 public:
  static Result<std::vector<StateEntry>> Load(const std::string& path = kStateFile);
  // Appends an entry and fsyncs.
  static Status Append(const StateEntry& e, const std::string& path = kStateFile);
  static Status Remove(const std::string& path = kStateFile);
};

// A sysfs / procfs value changed for the run; the original is recorded in the
// state file before the change and written back by Restore (or cleanup).
class SavedSetting {
 public:
  // Reads the current value, records it, writes `value`.
  static Result<SavedSetting> Change(const std::string& path, const std::string& value);
  SavedSetting(SavedSetting&& o) noexcept;
  SavedSetting& operator=(SavedSetting&&) = delete;
  ~SavedSetting();
  Status Restore();
  const std::string& path() const { return path_; }

 private:
  SavedSetting(std::string path, std::string original)
      : path_(std::move(path)), original_(std::move(original)) {}
  std::string path_, original_;
  bool active_ = true;
};

// true when the caller is root (euid 0).
bool IsRoot();

// Pins the calling thread to `cpu`: 0, or the errno of sched_setaffinity.
// Only a system call (safe in a child between fork and exec).
int PinThread(int cpu);

}  // namespace swaplab::kernel
#pragma GCC visibility pop
