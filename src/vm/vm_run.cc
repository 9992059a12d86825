// SPDX-License-Identifier: MIT
// `swaplab vm run` (vm_run.h): `kernel run` in a qemu guest.
#include "swaplab/vm/vm_run.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
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

// One `vm run`: its steps in order, sharing the guest kernel, the work
// directory and the result.
class VmRun {
 public:
  VmRun(const VmRunOptions& o, const volatile std::sig_atomic_t* interrupted)
      : o_(o), interrupted_(interrupted) {}

  // Refuses a bad trace, device or policy before anything is made.
  Status Check() {
    if (access(o_.trace.c_str(), R_OK) != 0) return Status(-EINVAL, o_.trace + ": cannot read");
    const std::vector<std::string> devices = {"file", "loop", "loop-ssd", "zram"};
    if (std::find(devices.begin(), devices.end(), o_.device) == devices.end())
      return Status(-EINVAL, "--device " + o_.device + ": file, loop, loop-ssd or zram");
    auto area_pages = TraceAreaPages(o_.trace);
    if (!area_pages.ok()) return area_pages.status();
    area_pages_ = *area_pages;
    auto resolved = ResolveGuestKernel(o_.vm);
    if (!resolved.ok()) return resolved.status();
    gk_ = *resolved;
    res_.policy = o_.policy.empty() ? alloc::PresetForRelease(gk_.release) : o_.policy;
    auto policy = alloc::Policy::Preset(res_.policy);
    if (!policy.ok()) return policy.status();
    policy_.emplace(*policy);
    return Status::Ok();
  }

  // The initramfs: this program, without its debug information, and what
  // it loads.
  Status MakeInitramfs() {
    auto wd = workload::WorkDir::Create();
    if (!wd.ok()) return wd.status();
    wd_.emplace(std::move(wd).value());
    dir_ = wd_->path();
    std::error_code ec;
    const std::string exe =
        o_.swaplab.empty() ? fs::read_symlink("/proc/self/exe", ec).string() : o_.swaplab;
    if (ec || access(exe.c_str(), X_OK) != 0)
      return Status(-ENOENT, "cannot find the swaplab program to run in the guest (" + exe + ")");
    const std::string guest_exe = dir_ + "/swaplab";
    if (Status st = RunToFile({"strip", "--strip-debug", "-o", guest_exe, exe}, "/dev/null");
        !st.ok())
      return Status(st.code(), "strip " + exe + ": " + st.message());
    auto libs = SharedLibraries(exe, dir_);
    if (!libs.ok()) return libs.status();
    InitramfsSpec is;
    is.modules_dir = gk_.modules;
    // ext4 asks for the crc32c driver at mount (a soft dependency: not in
    // .modinfo depends=), and the generic one runs on any CPU qemu emulates;
    // virtio_pci is a module in 6.1 (built in from 6.12).
    is.modules = {"virtio_pci", "virtio_blk", "crc32c_generic", "ext4", "loop", "zram"};
    is.files.push_back({"/bin/swaplab", guest_exe, 0755});
    for (const auto& l : *libs) is.files.push_back({l, l, 0755});
    initrd_ = dir_ + "/initramfs.cpio";
    if (auto ir = WriteInitramfs(initrd_, is, dir_); !ir.ok()) return ir.status();
    return Status::Ok();
  }

  // The guest's /var/tmp: ext4 with the trace, room for the areas.
  Status MakeDisk() {
    std::error_code ec;
    const std::string in_dir = dir_ + "/in";
    disk_ = dir_ + "/disk.img";
    fs::create_directories(in_dir, ec);
    fs::copy_file(o_.trace, in_dir + "/in.trace", ec);
    if (ec) return Status(-EIO, "cannot copy " + o_.trace + ": " + ec.message());
    // --floor's area beside them: at most twice the pages the areas hold
    // (Runner::MeasureFloor).
    const uint64_t disk_mib = ((o_.floor ? 3 : 1) * area_pages_ * alloc::kPageSize >> 20) + 64;
    // 4 KiB blocks: a filesystem this small gets 1 KiB ones by default, and a
    // swap file on those loses the pages whose blocks do not start on a page.
    if (Status st =
            RunToFile({"mkfs.ext4", "-q", "-F", "-b", std::to_string(alloc::kPageSize), "-L",
                       "swaplab-vm", "-d", in_dir, disk_, std::to_string(disk_mib) + "M"},
                      "/dev/null");
        !st.ok())
      return Status(st.code(), "mkfs.ext4 of the guest's disk: " + st.message());
    return Status::Ok();
  }

  // Boots the guest, which runs `kernel run` on the trace and powers off.
  Status BootGuest() {
    if (interrupted_ && *interrupted_) return Status(-EINTR, "interrupted");
    auto accel = ResolveAccel(o_.vm, gk_.kernel, initrd_, dir_, interrupted_, &res_.accel_why);
    if (!accel.ok()) return accel.status();
    res_.accel = Name(*accel);
    BootSpec b = BootOf("run", gk_, initrd_, *accel, o_.vm);
    b.drives = {{disk_}};
    b.append = "swaplab.mode=run swaplab.device=" + o_.device + " swaplab.policy=" + res_.policy +
               " swaplab.reruns=" + std::to_string(o_.reruns) +
               (o_.annotate_inuse ? " swaplab.annotate=1" : "") +
               (o_.floor ? " swaplab.floor=1" : "") +
               (o_.vm.append.empty() ? "" : " " + o_.vm.append);
    b.milestones = {"swaplab-init: kernel run ", "swaplab-init: kernel run exited"};
    if (o_.vm.stage)
      b.on_milestone = [this](size_t k) { o_.vm.stage(k + 1, k ? "done" : "kernel run"); };
    if (o_.vm.stage) o_.vm.stage(0, "boot");
    // A guest whose block I/O hangs or whose kernel fails before init is
    // booted again, once, on the disk as it was (BootRetrying, qemu.h).
    auto boot = BootRetrying(o_.vm, b, dir_, interrupted_, &res_.retries);
    if (!boot.ok()) return boot.status();
    boot_ = std::move(boot).value();
    res_.boot_wall_s = boot_.wall_s;
    const ConsoleFacts cf = ParseConsole(boot_.console);
    res_.release = cf.release.empty() ? gk_.release : cf.release;
    Keep("run.log", boot_.console);
    return Status::Ok();
  }

  // What the guest left on its disk: its exit code, the written trace and
  // its JSON result.
  Status CollectGuestFiles() {
    auto rc = GuestFile("rc");
    if (!boot_.powered_off || !rc.ok() || rc->empty())
      return Status(-EIO, WhyBootFailed(boot_) + " before kernel run ended (qemu exit " +
                              std::to_string(boot_.exit_status) + "); console tail:\n" +
                              ConsoleTail(boot_.console, 25) + ConsoleTail(boot_.qemu_stderr, 5));
    auto err = GuestFile("stderr.txt");
    if (std::atoi(rc->c_str()) != 0)
      return Status(-EIO, "kernel run in the guest (Linux " + res_.release + ") exited with " +
                              rc->substr(0, rc->find('\n')) + ": " +
                              (err.ok() ? ConsoleTail(*err, 10) : std::string("no stderr")));
    auto json = GuestFile("result.json");
    auto written = GuestFile("out.trace");
    if (!json.ok() || !written.ok() || written->rfind(workload::kTraceHeader, 0) != 0)
      return Status(-EIO, "the guest left no written trace or result on its disk");
    res_.kernel_json = std::move(*json);
    res_.written_trace = std::move(*written);
    Keep("result.json", res_.kernel_json);
    Keep("out.trace", res_.written_trace);
    if (o_.out.empty()) return Status::Ok();
    area::OutputOptions oo;  // never the trace itself, an area or a device
    oo.force = true;         // an existing file is replaced, as before
    oo.inputs = {o_.trace};
    return area::WriteOutputFile(o_.out, res_.written_trace, oo);
  }

  // The host replays the written trace too: its agreement must be the guest's.
  Status CheckHostReplay() {
    nlohmann::json j = nlohmann::json::parse(res_.kernel_json, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("agree") || !j["agree"].is_number())
      return Status(-EIO, "the guest's kernel run wrote no JSON result");
    if (j.contains("seconds") && j["seconds"].is_number()) res_.guest_run_s = j["seconds"];
    workload::ReplayOptions ro;
    ro.trace = dir_ + "/guest-out.trace";
    ro.policy = *policy_;
    ro.cpus = 0;  // the guest's CPUs, from the written trace's `cpus` record
    auto rep = workload::Replay(ro);
    if (!rep.ok()) return Status(rep.status().code(), "host replay: " + rep.status().message());
    res_.host_replay = rep->summary;
    if (res_.host_replay.agree != j["agree"].get<uint64_t>())
      return Status(-EIO, "the host's replay agrees on " + std::to_string(res_.host_replay.agree) +
                              " placements, the guest's on " + j["agree"].dump());
    return Status::Ok();
  }

  VmRunResult TakeResult() { return std::move(res_); }

 private:
  void Keep(const std::string& name, const std::string& text) { KeepText(o_.keep_dir, name, text); }

  // A file the guest left on its disk (debugfs reads ext4 without mounting).
  Result<std::string> GuestFile(const std::string& name) {
    const std::string to = dir_ + "/guest-" + name;
    if (Status st = RunToFile({"debugfs", "-R", "cat /" + name, disk_}, to, to + ".err"); !st.ok())
      return st;
    return ReadHostFile(to);
  }

  const VmRunOptions& o_;
  const volatile std::sig_atomic_t* const interrupted_;
  VmRunResult res_;
  uint64_t area_pages_ = 0;
  GuestKernel gk_;
  std::optional<alloc::Policy> policy_;
  std::optional<workload::WorkDir> wd_;  // removed with the run
  std::string dir_, initrd_, disk_;
  BootResult boot_;
};

}  // namespace

Result<VmRunResult> RunInVm(const VmRunOptions& o, const volatile std::sig_atomic_t* interrupted) {
  VmRun run(o, interrupted);
  for (Status (VmRun::*step)() :
       {&VmRun::Check, &VmRun::MakeInitramfs, &VmRun::MakeDisk, &VmRun::BootGuest,
        &VmRun::CollectGuestFiles, &VmRun::CheckHostReplay})
    if (Status st = (run.*step)(); !st.ok()) return st;
  return run.TakeResult();
}

}  // namespace swaplab::vm
