// SPDX-License-Identifier: MIT
// `vm hibernate`: seed 001's layout made by the guest's kernel, its image
// read on the host, and the model run on the guest's trace.
#include "swaplab/vm/vm_hibernate.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "swaplab/area/io_engine_factory.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/vm/initramfs.h"
#include "swaplab/workload/temp_files.h"

// Where the agent is installed (cmake --install, the .deb): relative to the
// installed swaplab's directory, and the configured prefix's path for other
// programs linking the vm library.
#ifndef SWAPLAB_GUEST_AGENT_FROM_BINDIR
#define SWAPLAB_GUEST_AGENT_FROM_BINDIR ""
#endif
#ifndef SWAPLAB_GUEST_AGENT_INSTALLED
#define SWAPLAB_GUEST_AGENT_INSTALLED ""
#endif

namespace swaplab::vm {

namespace fs = std::filesystem;

ConsoleFacts ParseConsole(const std::string& console) {
  ConsoleFacts f;
  std::istringstream in(console);
  for (std::string line; std::getline(in, line);) {
    // "swaplab-init: start at uptime 2.33 s, kernel 6.12.117+deb12-amd64"
    if (f.release.empty() && line.find(kGuestInitLine) != std::string::npos) {
      const size_t k = line.find(", kernel ");
      if (k != std::string::npos) {
        const size_t from = k + 9, to = line.find_first_of(" \t\r", from);
        f.release = line.substr(from, to == std::string::npos ? std::string::npos : to - from);
      }
    }
    // "swaplab-agent: layout holes: A pages swapped out, B not in swap, C freed"
    if (const size_t l = line.find("swaplab-agent: layout "); l != std::string::npos) {
      const size_t colon = line.find(": ", l + 22);
      unsigned long long a = 0, b = 0, c = 0;
      if (colon != std::string::npos &&
          std::sscanf(line.c_str() + colon + 2,
                      "%llu pages swapped out, %llu not in swap, %llu freed", &a, &b, &c) == 3) {
        f.swapped = a;
        f.not_in_swap = b;
        f.freed = c;
      }
    }
    if (line.find("pattern pages intact") != std::string::npos) f.resumed_intact = true;
    if (const size_t pn = line.find("swaplab-init: swapfile.prefer_nonfull ");
        pn != std::string::npos && pn + 38 < line.size())
      f.prefer_nonfull = line[pn + 38] == 'Y' ? 1 : 0;
    if (const size_t io = line.find("PM: Image I/O: "); io != std::string::npos && f.io_bios < 0) {
      long long b = 0, p = 0;
      if (std::sscanf(line.c_str() + io + 15, "%lld bios, %lld pages", &b, &p) == 2 && b >= 0 &&
          p >= 0)
        f.io_bios = b, f.io_pages = p;
    }
    if (const size_t u = line.find("Unknown kernel command line parameters \"");
        u != std::string::npos && f.unknown_params.empty()) {
      const size_t from = u + 40, to = line.find('"', from);
      f.unknown_params = line.substr(from, to == std::string::npos ? std::string::npos : to - from);
    }
    // "PM: hibernation: Wrote 1015156 kbytes in 7.18 seconds (141.38 MB/s)", and "Read"
    for (const char* verb : {"Wrote ", "Read "}) {
      const size_t v = line.find(verb);
      unsigned long long kb = 0;
      double secs = 0, mbps = 0;
      if (v == std::string::npos ||
          std::sscanf(line.c_str() + v + std::strlen(verb), "%llu kbytes in %lf seconds (%lf MB/s)",
                      &kb, &secs, &mbps) != 3)
        continue;
      const bool wrote = verb[0] == 'W';
      (wrote ? f.wrote_kb : f.read_kb) = kb;
      (wrote ? f.wrote_s : f.read_s) = secs;
      (wrote ? f.wrote_mbps : f.read_mbps) = mbps;
    }
    const size_t pm = line.find("PM: ");
    if (pm != std::string::npos && (line.find("kbytes in") != std::string::npos ||
                                    line.find("pages copied") != std::string::npos ||
                                    line.find("Need to copy") != std::string::npos ||
                                    line.find("Compressing") != std::string::npos))
      f.pm_lines.push_back(line.substr(pm));
  }
  return f;
}

namespace {

// The places a guest agent is looked for when neither --agent nor
// SWAPLAB_GUEST_AGENT names one, in order: beside the running program (the
// build tree), the install prefix it runs from, the configured prefix.
std::vector<std::string> AgentCandidates() {
  std::vector<std::string> c;
  std::error_code ec;
  const fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (!ec) {
    c.push_back((dir / "swaplab_guest_agent").string());
    const fs::path from_bindir = SWAPLAB_GUEST_AGENT_FROM_BINDIR;
    if (!from_bindir.empty()) c.push_back((dir / from_bindir).lexically_normal().string());
  }
  const std::string installed = SWAPLAB_GUEST_AGENT_INSTALLED;
  if (!installed.empty() && std::find(c.begin(), c.end(), installed) == c.end())
    c.push_back(installed);
  return c;
}

// The agent's path; empty when none of the candidates exists.
std::string AgentPath(const VmOptions& o) {
  if (!o.agent.empty()) return o.agent;
  if (const char* e = std::getenv("SWAPLAB_GUEST_AGENT"); e && *e) return e;
  for (const std::string& p : AgentCandidates())
    if (access(p.c_str(), R_OK) == 0) return p;
  return "";
}

Status MakeZeroFile(const std::string& path, uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return Status(-errno, "cannot create " + path);
  const int rc = ::ftruncate(fd, static_cast<off_t>(bytes));
  ::close(fd);
  return rc == 0 ? Status::Ok() : Status(-EIO, "cannot size " + path);
}

std::string CompressArg(hibernate::Compressor c) {
  switch (c) {
    case hibernate::Compressor::kNone:
      return " hibernate=nocompress";
    case hibernate::Compressor::kLz4:
      return " hibernate.compressor=lz4";
    case hibernate::Compressor::kLzo:
      return " hibernate.compressor=lzo";
  }
  return "";
}

// Reads the image the guest left on `disk`: layout (inspect) and every page
// (read, with the kernel's CRC32 when it wrote one). Read-only.
Status ReadKernelImage(const std::string& disk, area::EngineKind io, SideMetrics* k,
                       KernelSideInfo* ki) {
  auto info = area::InspectArea(disk);
  if (!info.ok()) return info.status();
  area::EngineOptions eo;
  eo.limits = info->limits;
  eo.writable = false;
  auto engine = area::OpenEngine(io, disk, eo);
  if (!engine.ok()) return engine.status();
  const uint64_t device_pages = info->size_bytes / area::kPageSize;
  auto in = hibernate::InspectImage(**engine, 0, device_pages);
  if (!in.ok()) return Status(in.status().code(), "image inspect: " + in.status().message());
  ki->origin = hibernate::Name(in->info.origin);
  ki->compress = hibernate::Name(in->compress);
  k->snapshot_pages = in->info.pages;
  k->stream_pages = in->chain.entries.size();
  k->map_pages = in->chain.map_dblocks.size();
  k->slots = in->layout.slots;
  k->alloc_calls = in->layout.slots;  // 6.12's alloc_swapdev_block takes one slot per call
  k->runs_disk_order = in->layout.runs_disk_order;
  k->runs_write_order = in->layout.runs_write_order;
  k->clusters_touched = in->layout.clusters_touched;
  k->bios_per_page = in->layout.bios_per_page;
  k->bios_per_run = in->layout.bios_per_run;
  ki->image_slots = ImageSlotOrder(in->chain.entries, in->chain.map_dblocks);
  hibernate::ReaderOptions ro;
  ro.device_pages = device_pages;
  auto rep = hibernate::ReadImage(**engine, 0, ro);
  if (!rep.ok()) return Status(rep.status().code(), "image read: " + rep.status().message());
  ki->crc_verified = rep->crc_checked;
  return Status::Ok();
}

}  // namespace

Result<std::string> FindGuestAgent(const VmOptions& o) {
  const std::string agent = AgentPath(o);
  if (agent.empty()) {
    std::string tried;
    for (const std::string& p : AgentCandidates()) tried += (tried.empty() ? "" : ", ") + p;
    return Status(-ENOENT, "no guest agent at " + tried +
                               " (--agent or SWAPLAB_GUEST_AGENT names one; the "
                               "swaplab_guest_agent target builds it, with a static libc)");
  }
  if (access(agent.c_str(), R_OK) != 0)
    return Status(-ENOENT, "cannot read the guest agent " + agent);
  return agent;
}

std::vector<const char*> HibernateStages(bool resume) {
  std::vector<const char*> s = {"prepare",   "boot",        "layout",
                                "hibernate", "image write", "image read"};
  if (resume) s.insert(s.end(), {"resume boot", "image load"});
  s.push_back("model");
  return s;
}

namespace {

// One `vm hibernate`: its steps in order, sharing the stages, the guest
// kernel, the work directory, the disks and the report.
class HibernateRun {
 public:
  HibernateRun(const HibernateOptions& o, const volatile std::sig_atomic_t* interrupted)
      : o_(o), interrupted_(interrupted), stages_(HibernateStages(o.resume)) {}

  // Refuses bad sizes, knobs, kernel or agent before any boot, then writes
  // the initramfs and picks the accelerator.
  Status Prepare() {
    Stage("prepare");
    rep_.options = o_;
    if (o_.swap_bytes % alloc::kPageSize || o_.swap_bytes < (1u << 20))
      return Status(-EINVAL, "--swap: a whole number of pages, at least 1 MiB");
    auto policy = ModelPolicy(o_.policy, o_.knobs);  // refused before any boot
    if (!policy.ok()) return policy.status();
    policy_.emplace(*policy);
    rep_.swap_pages = o_.swap_bytes / alloc::kPageSize;
    rep_.image_pages_asked = o_.image_bytes / alloc::kPageSize;
    auto resolved = ResolveGuestKernel(o_.vm);
    if (!resolved.ok()) return resolved.status();
    gk_ = *resolved;
    auto found_agent = FindGuestAgent(o_.vm);
    if (!found_agent.ok()) return found_agent.status();
    auto wd = workload::WorkDir::Create();
    if (!wd.ok()) return wd.status();
    wd_.emplace(std::move(wd).value());
    dir_ = wd_->path();
    initrd_ = dir_ + "/initramfs.cpio";
    InitramfsSpec is;
    is.agent = *found_agent;
    is.modules_dir = gk_.modules;
    if (auto ir = WriteInitramfs(initrd_, is, dir_); !ir.ok()) return ir.status();
    if (Interrupted()) return Status(-EINTR, "interrupted");
    auto accel =
        ResolveAccel(o_.vm, gk_.kernel, initrd_, dir_, interrupted_, &rep_.kinfo.accel_why);
    if (!accel.ok()) return accel.status();
    accel_ = *accel;
    rep_.kinfo.accel = Name(accel_);
    return Status::Ok();
  }

  // The hibernating boot's spec, and its two disks: the swap area, freshly
  // formatted, and the zeroed disk the guest writes its trace on.
  Status MakeDisks() {
    disk_ = o_.vm.swap_disk.empty() ? dir_ + "/swap.img" : o_.vm.swap_disk;
    trace_disk_ = dir_ + "/trace.img";
    b_ = BootOf("hibernate", gk_, initrd_, accel_, o_.vm);
    b_.drives = {{disk_}, {trace_disk_}};
    // A guest whose block I/O stops completing, or whose kernel fails
    // before init, is booted again, once, from the fresh disk
    // (BootRetrying, qemu.h); its stages are reported again.
    // The guest's init starts the agent; the agent hibernates; the kernel's
    // save_image() / save_compressed_image() announce the data pages.
    b_.milestones = {kGuestInitLine, "swaplab-agent: hibernating", "image data"};
    b_.on_milestone = [this](size_t k) {
      Stage(std::array{"layout", "hibernate", "image write"}[k]);
    };
    b_.append = "swaplab.mode=layout swaplab.layout=" + std::string(workload::Name(o_.layout)) +
                " swaplab.swap_pages=" + std::to_string(rep_.swap_pages) +
                " swaplab.image_pages=" + std::to_string(rep_.image_pages_asked) +
                " swaplab.seed=" + std::to_string(o_.seed) +
                " swaplab.rotational=" + (o_.vm.rotational ? "1" : "0") + CompressArg(o_.compress) +
                (o_.vm.append.empty() ? "" : " " + o_.vm.append);
    std::error_code ec;
    fs::remove(disk_, ec);
    area::FormatOptions fo;
    fo.size_bytes = o_.swap_bytes;
    fo.label = "swaplab-vm";
    if (Status st = area::FormatArea(disk_, fo); !st.ok()) return st;
    return MakeZeroFile(trace_disk_, (8ull << 20) + rep_.swap_pages * 128);
  }

  // Boots the guest, which makes the layout and hibernates.
  Status BootHibernating() {
    Stage("boot");
    auto boot = BootRetrying(o_.vm, b_, dir_, interrupted_, &rep_.kinfo.retries);
    if (!boot.ok()) return boot.status();
    rep_.kinfo.boot_wall_s += boot->wall_s;
    if (boot->stopped || boot->kernel_failed)
      return Status(-EIO,
                    WhyBootFailed(*boot) + "; console tail:\n" + ConsoleTail(boot->console, 25));
    Keep("hibernate.log", boot->console);
    const ConsoleFacts cf = ParseConsole(boot->console);
    rep_.kinfo.release = cf.release.empty() ? gk_.release : cf.release;
    rep_.kinfo.layout_swapped = cf.swapped;
    rep_.kinfo.layout_not_in_swap = cf.not_in_swap;
    rep_.kinfo.layout_freed = cf.freed;
    rep_.kinfo.pm_lines = cf.pm_lines;
    rep_.kernel.write_s = cf.wrote_s;
    rep_.kernel.write_mbps = cf.wrote_mbps;
    rep_.kernel.kernel_write_bios = cf.io_bios;
    rep_.kernel.kernel_write_bio_pages = cf.io_pages;
    if (Status st = CheckKernelParams(cf); !st.ok()) return st;
    if (!boot->powered_off || cf.wrote_s < 0)
      return Status(
          -EIO,
          std::string(boot->timed_out ? "the guest timed out" : "the guest did not hibernate") +
              " (qemu exit " + std::to_string(boot->exit_status) + "); console tail:\n" +
              ConsoleTail(boot->console, 25) + ConsoleTail(boot->qemu_stderr, 5));
    return Status::Ok();
  }

  // The trace: NUL-terminated text at the start of the second disk; then
  // the image the guest left on the swap disk.
  Status ReadGuestDisks() {
    {
      std::ifstream in(trace_disk_, std::ios::binary);
      std::string t;
      std::getline(in, t, '\0');
      if (t.rfind("swaplab-trace 1", 0) != 0)
        return Status(-EIO, "the guest wrote no trace on its second disk");
      rep_.trace = std::move(t);
      std::ofstream(dir_ + "/trace.txt") << rep_.trace;
      Keep("layout.trace", rep_.trace);
    }
    Stage("image read");
    if (Status st = ReadKernelImage(disk_, o_.io, &rep_.kernel, &rep_.kinfo); !st.ok()) return st;
    if (!o_.keep_dir.empty()) {
      std::error_code ec;
      fs::copy_file(disk_, o_.keep_dir + "/swap.img", fs::copy_options::overwrite_existing, ec);
      Keep("image_slots.txt", FormatImageSlots(rep_.kinfo.image_slots, rep_.kernel.stream_pages));
    }
    if (Interrupted()) return Status(-EINTR, "interrupted");
    return Status::Ok();
  }

  // With --resume: boots again on the same disks and checks the guest
  // resumed the image intact.
  Status BootResuming() {
    if (!o_.resume) return Status::Ok();
    BootSpec r = b_;
    r.name = "resume";
    // The same drives as the hibernating boot: a different device set
    // changes the firmware's memory map, and the kernel refuses the image
    // ("Hibernate inconsistent memory map detected!").
    r.append = "swaplab.mode=resume" + (o_.vm.append.empty() ? "" : " " + o_.vm.append);
    // load_image() / load_compressed_image() announce the data pages.
    r.milestones = {"image data"};
    r.on_milestone = [this](size_t) { Stage("image load"); };
    Stage("resume boot");
    auto rb = BootRetrying(o_.vm, r, dir_, interrupted_, &rep_.kinfo.retries);
    if (!rb.ok()) return rb.status();
    Keep("resume.log", rb->console);
    const ConsoleFacts rf = ParseConsole(rb->console);
    rep_.kernel.read_s = rf.read_s;
    rep_.kernel.kernel_read_bios = rf.io_bios;
    rep_.kernel.kernel_read_bio_pages = rf.io_pages;
    rep_.kinfo.resume_wall_s = rb->wall_s;
    rep_.kinfo.resumed_intact = rf.resumed_intact;
    for (const auto& l : rf.pm_lines) rep_.kinfo.pm_lines.push_back(l);
    if (rf.read_s < 0 || !rf.resumed_intact)
      return Status(-EIO, "the guest did not resume the image intact; console tail:\n" +
                              ConsoleTail(rb->console, 25));
    return Status::Ok();
  }

  // The model on the guest's trace, side by side with the kernel.
  Status RunModel() {
    Stage("model");
    if (Status st = RunModelSide(dir_ + "/trace.txt", *policy_, o_.vm.smp, rep_.kernel.stream_pages,
                                 rep_.kinfo.image_slots, &rep_.model, &rep_.minfo, o_.model_source);
        !st.ok())
      return Status(st.code(), "model: " + st.message());
    return Status::Ok();
  }

  HibernateReport TakeReport() { return std::move(rep_); }

 private:
  bool Interrupted() const { return interrupted_ && *interrupted_; }

  void Keep(const std::string& name, const std::string& text) { KeepText(o_.keep_dir, name, text); }

  // A stage's index: the next of that name, or an earlier one when a boot
  // made again (BootRetrying) goes through its stages again.
  void Stage(const char* name) {
    const auto it = std::find_if(stages_.begin(), stages_.end(),
                                 [&](const char* s) { return std::string_view(s) == name; });
    if (it != stages_.end() && static_cast<size_t>(it - stages_.begin()) < stage_at_)
      stage_at_ = static_cast<size_t>(it - stages_.begin());
    while (stage_at_ < stages_.size() && std::string_view(stages_[stage_at_]) != name) ++stage_at_;
    if (o_.vm.stage && stage_at_ < stages_.size()) o_.vm.stage(stage_at_, name);
  }

  // A kernel that did not take a parameter of kernel-patches/ it was given.
  Status CheckKernelParams(const ConsoleFacts& cf) const {
    if (o_.vm.append.find("swapfile.prefer_nonfull=1") != std::string::npos &&
        cf.prefer_nonfull != 1)
      return Status(-EINVAL,
                    "Linux " + rep_.kinfo.release +
                        (cf.prefer_nonfull < 0 ? " has no swapfile.prefer_nonfull"
                                               : " did not take swapfile.prefer_nonfull=1") +
                        " (kernel-patches/nonfull-6.12; swaplab vm kernel build --name "
                        "rfc-6.12 builds a kernel with it)");
    if (!cf.unknown_params.empty() && !o_.vm.append.empty())
      for (std::string_view w : {"hibernate_alloc=", "hibernate_bio=", "swapfile."})
        if (cf.unknown_params.find(w) != std::string::npos)
          return Status(-EINVAL, "Linux " + rep_.kinfo.release + " does not know \"" +
                                     cf.unknown_params +
                                     "\" (a parameter of kernel-patches/; boot a kernel built with "
                                     "them: swaplab vm kernel build --name rfc-6.12)");
    return Status::Ok();
  }

  const HibernateOptions& o_;
  const volatile std::sig_atomic_t* const interrupted_;
  const std::vector<const char*> stages_;
  size_t stage_at_ = 0;
  HibernateReport rep_;
  std::optional<alloc::Policy> policy_;
  GuestKernel gk_;
  std::optional<workload::WorkDir> wd_;  // removed with the run
  std::string dir_, initrd_, disk_, trace_disk_;
  Accel accel_{};
  BootSpec b_;
};

}  // namespace

Result<HibernateReport> RunHibernate(const HibernateOptions& o,
                                     const volatile std::sig_atomic_t* interrupted) {
  HibernateRun run(o, interrupted);
  for (Status (HibernateRun::*step)() :
       {&HibernateRun::Prepare, &HibernateRun::MakeDisks, &HibernateRun::BootHibernating,
        &HibernateRun::ReadGuestDisks, &HibernateRun::BootResuming, &HibernateRun::RunModel})
    if (Status st = (run.*step)(); !st.ok()) return st;
  return run.TakeReport();
}

}  // namespace swaplab::vm
