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
    if (f.release.empty() && line.find("swaplab-init: start at uptime") != std::string::npos) {
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

Result<HibernateReport> RunHibernate(const HibernateOptions& o,
                                     const volatile std::sig_atomic_t* interrupted) {
  const std::vector<const char*> stages = HibernateStages(o.resume);
  size_t stage_at = 0;
  // A stage's index: the next of that name, or an earlier one when a boot
  // made again (BootRetryingHang) goes through its stages again.
  auto stage = [&](const char* name) {
    const auto it = std::find_if(stages.begin(), stages.end(),
                                 [&](const char* s) { return std::string_view(s) == name; });
    if (it != stages.end() && static_cast<size_t>(it - stages.begin()) < stage_at)
      stage_at = static_cast<size_t>(it - stages.begin());
    while (stage_at < stages.size() && std::string_view(stages[stage_at]) != name) ++stage_at;
    if (o.vm.stage && stage_at < stages.size()) o.vm.stage(stage_at, name);
  };
  stage("prepare");
  HibernateReport rep;
  rep.options = o;
  if (o.swap_bytes % alloc::kPageSize || o.swap_bytes < (1u << 20))
    return Status(-EINVAL, "--swap: a whole number of pages, at least 1 MiB");
  auto policy = ModelPolicy(o.policy, o.knobs);  // refused before any boot
  if (!policy.ok()) return policy.status();
  rep.swap_pages = o.swap_bytes / alloc::kPageSize;
  rep.image_pages_asked = o.image_bytes / alloc::kPageSize;
  auto resolved = ResolveGuestKernel(o.vm);
  if (!resolved.ok()) return resolved.status();
  const GuestKernel gk = *resolved;
  auto found_agent = FindGuestAgent(o.vm);
  if (!found_agent.ok()) return found_agent.status();
  const std::string agent = *found_agent;
  auto wd = workload::WorkDir::Create();
  if (!wd.ok()) return wd.status();
  const std::string dir = wd->path();
  const std::string initrd = dir + "/initramfs.cpio";
  InitramfsSpec is;
  is.agent = agent;
  is.modules_dir = gk.modules;
  if (auto ir = WriteInitramfs(initrd, is, dir); !ir.ok()) return ir.status();
  if (interrupted && *interrupted) return Status(-EINTR, "interrupted");
  auto accel = ResolveAccel(o.vm, gk.kernel, initrd, dir, interrupted, &rep.kinfo.accel_why);
  if (!accel.ok()) return accel.status();
  rep.kinfo.accel = Name(*accel);

  const std::string disk = o.vm.swap_disk.empty() ? dir + "/swap.img" : o.vm.swap_disk;
  const std::string trace_disk = dir + "/trace.img";
  BootSpec b = BootOf("hibernate", gk, initrd, *accel, o.vm);
  b.drives = {{disk}, {trace_disk}};
  // A guest whose block I/O stops completing is stopped and booted again,
  // once, from the fresh disk (BootRetryingHang, qemu.h); its stages are
  // reported again.
  // The guest's init starts the agent; the agent hibernates; the kernel's
  // save_image() / save_compressed_image() announce the data pages.
  b.milestones = {"swaplab-init: start at uptime", "swaplab-agent: hibernating", "image data"};
  b.on_milestone = [&](size_t k) { stage(std::array{"layout", "hibernate", "image write"}[k]); };
  b.append = "swaplab.mode=layout swaplab.layout=" + std::string(workload::Name(o.layout)) +
             " swaplab.swap_pages=" + std::to_string(rep.swap_pages) +
             " swaplab.image_pages=" + std::to_string(rep.image_pages_asked) +
             " swaplab.seed=" + std::to_string(o.seed) +
             " swaplab.rotational=" + (o.vm.rotational ? "1" : "0") + CompressArg(o.compress) +
             (o.vm.append.empty() ? "" : " " + o.vm.append);
  {
    std::error_code ec;
    fs::remove(disk, ec);
    area::FormatOptions fo;
    fo.size_bytes = o.swap_bytes;
    fo.label = "swaplab-vm";
    if (Status st = area::FormatArea(disk, fo); !st.ok()) return st;
  }
  if (Status st = MakeZeroFile(trace_disk, (8ull << 20) + rep.swap_pages * 128); !st.ok())
    return st;
  stage("boot");
  auto boot = BootRetryingHang(o.vm, b, dir, interrupted, &rep.kinfo.hang_retries);
  if (!boot.ok()) return boot.status();
  rep.kinfo.boot_wall_s += boot->wall_s;
  if (boot->stopped)
    return Status(
        -EIO,
        "the guest's block I/O hung twice (hung-task report on its console); console tail:\n" +
            ConsoleTail(boot->console, 25));
  auto keep = [&](const std::string& name, const std::string& text) {
    KeepText(o.keep_dir, name, text);
  };
  keep("hibernate.log", boot->console);
  const ConsoleFacts cf = ParseConsole(boot->console);
  rep.kinfo.release = cf.release.empty() ? gk.release : cf.release;
  rep.kinfo.layout_swapped = cf.swapped;
  rep.kinfo.layout_not_in_swap = cf.not_in_swap;
  rep.kinfo.layout_freed = cf.freed;
  rep.kinfo.pm_lines = cf.pm_lines;
  rep.kernel.write_s = cf.wrote_s;
  rep.kernel.write_mbps = cf.wrote_mbps;
  rep.kernel.kernel_write_bios = cf.io_bios;
  rep.kernel.kernel_write_bio_pages = cf.io_pages;
  if (o.vm.append.find("swapfile.prefer_nonfull=1") != std::string::npos && cf.prefer_nonfull != 1)
    return Status(-EINVAL, "Linux " + rep.kinfo.release +
                               (cf.prefer_nonfull < 0 ? " has no swapfile.prefer_nonfull"
                                                      : " did not take swapfile.prefer_nonfull=1") +
                               " (kernel-patches/nonfull-6.12; swaplab vm kernel build --name "
                               "rfc-6.12 builds a kernel with it)");
  if (!cf.unknown_params.empty() && !o.vm.append.empty())
    for (std::string_view w : {"hibernate_alloc=", "hibernate_bio=", "swapfile."})
      if (cf.unknown_params.find(w) != std::string::npos)
        return Status(-EINVAL, "Linux " + rep.kinfo.release + " does not know \"" +
                                   cf.unknown_params +
                                   "\" (a parameter of kernel-patches/; boot a kernel built with "
                                   "them: swaplab vm kernel build --name rfc-6.12)");
  if (!boot->powered_off || cf.wrote_s < 0)
    return Status(
        -EIO, std::string(boot->timed_out ? "the guest timed out" : "the guest did not hibernate") +
                  " (qemu exit " + std::to_string(boot->exit_status) + "); console tail:\n" +
                  ConsoleTail(boot->console, 25) + ConsoleTail(boot->qemu_stderr, 5));

  // The trace: NUL-terminated text at the start of the second disk.
  {
    std::ifstream in(trace_disk, std::ios::binary);
    std::string t;
    std::getline(in, t, '\0');
    if (t.rfind("swaplab-trace 1", 0) != 0)
      return Status(-EIO, "the guest wrote no trace on its second disk");
    rep.trace = std::move(t);
    std::ofstream(dir + "/trace.txt") << rep.trace;
    keep("layout.trace", rep.trace);
  }
  stage("image read");
  if (Status st = ReadKernelImage(disk, o.io, &rep.kernel, &rep.kinfo); !st.ok()) return st;
  if (!o.keep_dir.empty()) {
    std::error_code ec;
    fs::copy_file(disk, o.keep_dir + "/swap.img", fs::copy_options::overwrite_existing, ec);
    keep("image_slots.txt", FormatImageSlots(rep.kinfo.image_slots, rep.kernel.stream_pages));
  }
  if (interrupted && *interrupted) return Status(-EINTR, "interrupted");

  if (o.resume) {
    BootSpec r = b;
    r.name = "resume";
    // The same drives as the hibernating boot: a different device set
    // changes the firmware's memory map, and the kernel refuses the image
    // ("Hibernate inconsistent memory map detected!").
    r.append = "swaplab.mode=resume" + (o.vm.append.empty() ? "" : " " + o.vm.append);
    // load_image() / load_compressed_image() announce the data pages.
    r.milestones = {"image data"};
    r.on_milestone = [&](size_t) { stage("image load"); };
    stage("resume boot");
    auto rb = BootRetryingHang(o.vm, r, dir, interrupted, &rep.kinfo.hang_retries);
    if (!rb.ok()) return rb.status();
    keep("resume.log", rb->console);
    const ConsoleFacts rf = ParseConsole(rb->console);
    rep.kernel.read_s = rf.read_s;
    rep.kernel.kernel_read_bios = rf.io_bios;
    rep.kernel.kernel_read_bio_pages = rf.io_pages;
    rep.kinfo.resume_wall_s = rb->wall_s;
    rep.kinfo.resumed_intact = rf.resumed_intact;
    for (const auto& l : rf.pm_lines) rep.kinfo.pm_lines.push_back(l);
    if (rf.read_s < 0 || !rf.resumed_intact)
      return Status(-EIO, "the guest did not resume the image intact; console tail:\n" +
                              ConsoleTail(rb->console, 25));
  }

  stage("model");
  if (Status st = RunModelSide(dir + "/trace.txt", *policy, o.vm.smp, rep.kernel.stream_pages,
                               rep.kinfo.image_slots, &rep.model, &rep.minfo, o.model_source);
      !st.ok())
    return Status(st.code(), "model: " + st.message());
  return rep;
}

}  // namespace swaplab::vm
