// SPDX-License-Identifier: MIT
// Files and directories swaplab writes on request (`map -o`, `run --html`,
// `--out`): never the input, a swap area or a device; never someone else's
// file without --force; written through a temporary file in the same
// directory and renamed, so a reader or a crash sees the old file or the
// whole new one.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::area {

struct OutputOptions {
  bool force = false;               // an existing regular file may be replaced
  std::vector<std::string> inputs;  // paths the command reads (same inode refused)
};

// Refuses, before anything is written: a path that is one of o.inputs
// (same st_dev and st_ino, links included) (-EINVAL); a block or character
// device, a FIFO, a socket or a directory (-EINVAL); a file whose first
// page ends in a swap signature (SWAPSPACE2, SWAP-SPACE, S1SUSPEND)
// (-EBUSY, even with force); any other existing file unless o.force
// (-EEXIST). A missing path is fine.
Status CheckOutputFile(const std::string& path, const OutputOptions& o);

// CheckOutputFile, then the content written to a new file in the same
// directory (random name, O_CREAT | O_EXCL | O_NOFOLLOW, mode 0644),
// fsync'd and renamed over `path`. The temporary is removed on failure.
Status WriteOutputFile(const std::string& path, std::string_view content, const OutputOptions& o);

// A file written in pieces (`trace convert` streams a trace of any
// length): checked as CheckOutputFile checks it when opened, written into
// the temporary beside it, renamed over it by Commit. Destroyed without
// Commit (an error, an exception), the temporary is removed.
class OutputFileWriter {
 public:
  static Result<std::unique_ptr<OutputFileWriter>> Open(const std::string& path,
                                                        const OutputOptions& o);
  ~OutputFileWriter();
  OutputFileWriter(const OutputFileWriter&) = delete;
  OutputFileWriter& operator=(const OutputFileWriter&) = delete;
  Status Write(std::string_view data);
  // fsync, close and rename: after it the path holds the whole new file.
  Status Commit();
  // The temporary's path (a caller may register it to be removed on a signal).
  const std::string& temp_path() const { return temp_; }

 private:
  explicit OutputFileWriter(std::string path) : path_(std::move(path)) {}
  std::string path_, temp_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
};

// The file that marks a directory as one swaplab writes into.
inline constexpr char kOutputMarker[] = ".swaplab-output";

// An output directory is new, empty or ours: created (0755) when missing;
// an existing one must be a directory (not a link) that is empty or holds
// kOutputMarker, else -EEXIST naming the first foreign entry. Writes the
// marker. Call before the work starts.
Status PrepareOutputDir(const std::string& dir);

// `name` in a directory PrepareOutputDir accepted, written as
// WriteOutputFile does (replacing an earlier run's file).
Status WriteOutputDirFile(const std::string& dir, const std::string& name,
                          std::string_view content);

}  // namespace swaplab::area
#pragma GCC visibility pop
