// SPDX-License-Identifier: MIT
// `swaplab vm run` (vm_run.h): `kernel run` in a qemu guest.
#include "swaplab/vm/vm_run.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "swaplab/alloc/preset_for_release.h"
#include "swaplab/alloc/types.h"
#include "swaplab/area/output_file.h"
#include "swaplab/vm/initramfs.h"
#include "swaplab/vm/vm_hibernate.h"
#include "swaplab/workload/replay.h"
#include "swaplab/workload/temp_files.h"
#include "swaplab/workload/trace.h"

namespace swaplab::vm {

namespace fs = std::filesystem;

namespace {

// The shared libraries `exe` loads, and its loader, as ldd names them.
Result<std::vector<std::string>> SharedLibraries(const std::string& exe, const std::string& dir) {
  const std::string out = dir + "/ldd.txt";
  if (Status st = RunToFile({"ldd", exe}, out); !st.ok())
    return Status(st.code(), "ldd " + exe + ": " + st.message());
  auto text = ReadHostFile(out);
  if (!text.ok()) return text.status();
  std::vector<std::string> libs;
  std::istringstream in(*text);
  for (std::string l; std::getline(in, l);) {
    // "\tlibfmt.so.9 => /lib/x86_64-linux-gnu/libfmt.so.9 (0x...)" or
    // "\t/lib64/ld-linux-x86-64.so.2 (0x...)"; linux-vdso has no file.
    const size_t arrow = l.find("=> ");
    size_t from = arrow != std::string::npos ? arrow + 3 : l.find_first_not_of(" \t");
    if (from == std::string::npos || l[from] != '/') continue;
    const size_t to = l.find(" (", from);
    libs.push_back(l.substr(from, to == std::string::npos ? std::string::npos : to - from));
  }
  if (libs.empty()) return Status(-EIO, "ldd found no libraries for " + exe);
  return libs;
}

// Σ pages of the trace's swap areas (their size on the guest's disk).
Result<uint64_t> TraceAreaPages(const std::string& trace) {
  auto r = workload::TraceReader::Open(trace);
  if (!r.ok()) return r.status();
  uint64_t pages = 0;
  for (workload::TraceRecord rec;;) {
    auto more = (*r)->Next(&rec);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (rec.op == workload::TraceOp::kSwapon) pages += rec.pages;
  }
  return pages;
}

}  // namespace

Result<VmRunResult> RunInVm(const VmRunOptions& o, const volatile std::sig_atomic_t* interrupted) {
  VmRunResult res;
  if (access(o.trace.c_str(), R_OK) != 0) return Status(-EINVAL, o.trace + ": cannot read");
  const std::vector<std::string> devices = {"file", "loop", "loop-ssd", "zram"};
  if (std::find(devices.begin(), devices.end(), o.device) == devices.end())
    return Status(-EINVAL, "--device " + o.device + ": file, loop, loop-ssd or zram");
  auto area_pages = TraceAreaPages(o.trace);
  if (!area_pages.ok()) return area_pages.status();
  auto resolved = ResolveGuestKernel(o.vm);
  if (!resolved.ok()) return resolved.status();
  const GuestKernel gk = *resolved;
  res.policy = o.policy.empty() ? alloc::PresetForRelease(gk.release) : o.policy;
  auto policy = alloc::Policy::Preset(res.policy);
  if (!policy.ok()) return policy.status();

  auto wd = workload::WorkDir::Create();
  if (!wd.ok()) return wd.status();
  const std::string dir = wd->path();
  // This program, without its debug information, and what it loads.
  std::error_code ec;
  const std::string exe =
      o.swaplab.empty() ? fs::read_symlink("/proc/self/exe", ec).string() : o.swaplab;
  if (ec || access(exe.c_str(), X_OK) != 0)
    return Status(-ENOENT, "cannot find the swaplab program to run in the guest (" + exe + ")");
  const std::string guest_exe = dir + "/swaplab";
  if (Status st = RunToFile({"strip", "--strip-debug", "-o", guest_exe, exe}, "/dev/null");
      !st.ok())
    return Status(st.code(), "strip " + exe + ": " + st.message());
  auto libs = SharedLibraries(exe, dir);
  if (!libs.ok()) return libs.status();
  InitramfsSpec is;
  is.modules_dir = gk.modules;
  // ext4 asks for the crc32c driver at mount (a soft dependency: not in
  // .modinfo depends=), and the generic one runs on any CPU qemu emulates;
  // virtio_pci is a module in 6.1 (built in from 6.12).
  is.modules = {"virtio_pci", "virtio_blk", "crc32c_generic", "ext4", "loop", "zram"};
  is.files.push_back({"/bin/swaplab", guest_exe, 0755});
  for (const auto& l : *libs) is.files.push_back({l, l, 0755});
  const std::string initrd = dir + "/initramfs.cpio";
  if (auto ir = WriteInitramfs(initrd, is, dir); !ir.ok()) return ir.status();

  // The guest's /var/tmp: ext4 with the trace, room for the areas.
  const std::string in_dir = dir + "/in", disk = dir + "/disk.img";
  fs::create_directories(in_dir, ec);
  fs::copy_file(o.trace, in_dir + "/in.trace", ec);
  if (ec) return Status(-EIO, "cannot copy " + o.trace + ": " + ec.message());
  const uint64_t disk_mib = (*area_pages * alloc::kPageSize >> 20) + 64;
  // 4 KiB blocks: a filesystem this small gets 1 KiB ones by default, and a
  // swap file on those loses the pages whose blocks do not start on a page.
  if (Status st = RunToFile({"mkfs.ext4", "-q", "-F", "-b", std::to_string(alloc::kPageSize), "-L",
                             "swaplab-vm", "-d", in_dir, disk, std::to_string(disk_mib) + "M"},
                            "/dev/null");
      !st.ok())
    return Status(st.code(), "mkfs.ext4 of the guest's disk: " + st.message());
  if (interrupted && *interrupted) return Status(-EINTR, "interrupted");
  auto accel = ResolveAccel(o.vm, gk.kernel, initrd, dir, interrupted, &res.accel_why);
  if (!accel.ok()) return accel.status();
  res.accel = Name(*accel);

  BootSpec b = BootOf("run", gk, initrd, *accel, o.vm);
  b.drives = {{disk}};
  b.append = "swaplab.mode=run swaplab.device=" + o.device + " swaplab.policy=" + res.policy +
             " swaplab.reruns=" + std::to_string(o.reruns) +
             (o.annotate_inuse ? " swaplab.annotate=1" : "") +
             (o.vm.append.empty() ? "" : " " + o.vm.append);
  b.milestones = {"swaplab-init: kernel run ", "swaplab-init: kernel run exited"};
  if (o.vm.stage) b.on_milestone = [&](size_t k) { o.vm.stage(k + 1, k ? "done" : "kernel run"); };
  if (o.vm.stage) o.vm.stage(0, "boot");
  // A guest whose block I/O hangs is booted again, once, on the disk as it
  // was (BootRetryingHang, qemu.h).
  auto boot = BootRetryingHang(o.vm, b, dir, interrupted, &res.hang_retries);
  if (!boot.ok()) return boot.status();
  res.boot_wall_s = boot->wall_s;
  const ConsoleFacts cf = ParseConsole(boot->console);
  res.release = cf.release.empty() ? gk.release : cf.release;
  auto keep = [&](const std::string& name, const std::string& text) {
    KeepText(o.keep_dir, name, text);
  };
  keep("run.log", boot->console);
  // What the guest left on its disk (debugfs reads ext4 without mounting).
  auto guest_file = [&](const std::string& name) -> Result<std::string> {
    const std::string to = dir + "/guest-" + name;
    if (Status st = RunToFile({"debugfs", "-R", "cat /" + name, disk}, to, to + ".err"); !st.ok())
      return st;
    return ReadHostFile(to);
  };
  auto rc = guest_file("rc");
  if (!boot->powered_off || !rc.ok() || rc->empty())
    return Status(-EIO, std::string(boot->timed_out ? "the guest timed out"
                                    : boot->stopped ? "the guest's block I/O hung twice"
                                                    : "the guest stopped") +
                            " before kernel run ended (qemu exit " +
                            std::to_string(boot->exit_status) + "); console tail:\n" +
                            ConsoleTail(boot->console, 25) + ConsoleTail(boot->qemu_stderr, 5));
  auto err = guest_file("stderr.txt");
  if (std::atoi(rc->c_str()) != 0)
    return Status(-EIO, "kernel run in the guest (Linux " + res.release + ") exited with " +
                            rc->substr(0, rc->find('\n')) + ": " +
                            (err.ok() ? ConsoleTail(*err, 10) : std::string("no stderr")));
  auto json = guest_file("result.json");
  auto written = guest_file("out.trace");
  if (!json.ok() || !written.ok() || written->rfind(workload::kTraceHeader, 0) != 0)
    return Status(-EIO, "the guest left no written trace or result on its disk");
  res.kernel_json = std::move(*json);
  res.written_trace = std::move(*written);
  keep("result.json", res.kernel_json);
  keep("out.trace", res.written_trace);
  if (!o.out.empty()) {
    area::OutputOptions oo;  // never the trace itself, an area or a device
    oo.force = true;         // an existing file is replaced, as before
    oo.inputs = {o.trace};
    if (Status w = area::WriteOutputFile(o.out, res.written_trace, oo); !w.ok()) return w;
  }
  nlohmann::json j = nlohmann::json::parse(res.kernel_json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("agree") || !j["agree"].is_number())
    return Status(-EIO, "the guest's kernel run wrote no JSON result");
  if (j.contains("seconds") && j["seconds"].is_number()) res.guest_run_s = j["seconds"];

  // The host replays the written trace too: its agreement must be the guest's.
  workload::ReplayOptions ro;
  ro.trace = dir + "/guest-out.trace";
  ro.policy = *policy;
  ro.cpus = 0;  // the guest's CPUs, from the written trace's `cpus` record
  auto rep = workload::Replay(ro);
  if (!rep.ok()) return Status(rep.status().code(), "host replay: " + rep.status().message());
  res.host_replay = rep->summary;
  if (res.host_replay.agree != j["agree"].get<uint64_t>())
    return Status(-EIO, "the host's replay agrees on " + std::to_string(res.host_replay.agree) +
                            " placements, the guest's on " + j["agree"].dump());
  return res;
}

}  // namespace swaplab::vm
