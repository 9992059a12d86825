// SPDX-License-Identifier: MIT
// The guest's initramfs, written as a newc cpio archive (the format of
// Documentation/driver-api/early-userspace/buffer-format.rst): a static
// busybox, the guest agent, the embedded /init (src/vm/guest/init.sh), and
// kernel modules with their dependencies, read from each module's .modinfo
// `depends=` (no kmod needed), decompressed with xz / zstd / gzip.
#pragma once
#pragma GCC visibility push(default)
#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::vm {

// A file of the host put into the archive at `guest` (an absolute path;
// its directories are made).
struct InitramfsFile {
  std::string guest, host;
  uint32_t mode = 0755;
};

struct InitramfsSpec {
  std::string busybox;  // empty: the first static one of /bin, /usr/bin
  std::string agent;    // static guest agent (empty: none)
  std::vector<InitramfsFile> files;
  std::string modules_dir;  // lib/modules/RELEASE (needs modules.order)
  std::vector<std::string> modules = {"virtio_blk", "lz4"};
};

struct InitramfsReport {
  std::vector<std::string> modules;  // load order (dependencies first); built-in ones left out
  uint64_t bytes = 0;
};

// The embedded /init script.
const std::string& InitScript();

// Writes the archive to `out` (scratch files go in `tmpdir`). -ENOENT: no
// static busybox, no module or modules.order; -EIO: a decompressor failed.
Result<InitramfsReport> WriteInitramfs(const std::string& out, const InitramfsSpec& spec,
                                       const std::string& tmpdir);

// The whole of a host file; -ENOENT naming it when it cannot be read.
Result<std::string> ReadHostFile(const std::string& path);

// Runs args (a program on PATH and its arguments) with its stdout to the
// file `out` (and its stderr to `err` when given); -EIO unless it exits 0.
Status RunToFile(std::vector<std::string> args, const std::string& out,
                 const std::string& err = "");

// Low level, for tests: one newc record (mode with its S_IF* type bits).
void AppendCpioEntry(std::string* archive, const std::string& name, uint32_t mode,
                     const std::string& data, uint32_t ino);
void AppendCpioTrailer(std::string* archive);

}  // namespace swaplab::vm
#pragma GCC visibility pop
