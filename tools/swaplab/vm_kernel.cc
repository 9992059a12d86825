// SPDX-License-Identifier: MIT
// `swaplab vm kernel build | list`: guest kernels built here from Debian's
// kernel source with the project's config and patches. The work is
// scripts/vm-kernel-build's (apt-get download, patch, make); this finds the
// script and hands it the checked arguments.
#include "vm_kernel.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#ifndef SWAPLAB_SOURCE_DIR
#define SWAPLAB_SOURCE_DIR ""
#endif
#ifndef SWAPLAB_LIBEXEC_DIR
#define SWAPLAB_LIBEXEC_DIR ""
#endif
#ifndef SWAPLAB_DATA_DIR
#define SWAPLAB_DATA_DIR ""
#endif

namespace swaplab::tools {

namespace fs = std::filesystem;

VmKernelCommands AddVmKernel(CLI::App* vm, VmKernelOptions& o) {
  VmKernelCommands c;
  c.kernel =
      vm->add_subcommand("kernel", "guest kernels built here (Debian's source, our patches)");
  c.kernel->require_subcommand(1, 1);
  auto* b = c.build = c.kernel->add_subcommand(
      "build", "build a guest kernel from Debian's linux-source with the project's config");
  b->add_option("--source", o.source, "kernel source series (Debian's linux-source-SERIES)")
      ->capture_default_str()
      ->check(CLI::IsMember({"6.12"}));
  b->add_option("--patch", o.patches, "a patch (git format-patch, -p1) to apply, in order");
  b->add_option("--series", o.series,
                "every *.patch of a directory, or of kernel-patches/NAME (rfc-6.12, nonfull-6.12)");
  b->add_option("--config-fragment", o.fragments, "Kconfig lines added to the project's fragment");
  b->add_option("--name", o.name,
                "name for --kernel NAME; a name of kernel-patches/ alone applies that series");
  b->add_option("--jobs", o.jobs, "make -j (default: the CPUs)")->check(CLI::Range(1, 1024));
  b->add_flag("--check", o.check, "only check that the patches apply without fuzz");
  b->add_flag("--cached-only", o.cached_only,
              "the cached kernel of these inputs, or exit 7 without building");
  b->add_option("--progress", o.progress, "always | never | auto")
      ->check(CLI::IsMember({"always", "never", "auto"}))
      ->capture_default_str();
  c.list = c.kernel->add_subcommand("list", "the named kernels built so far");
  return c;
}

namespace {

// The script and the directory holding kernel-config/ and kernel-patches/:
// $SWAPLAB_KERNEL_BUILD_SCRIPT, then the source tree this swaplab was built
// from, then the installed copy.
struct Script {
  std::string path, data_dir;
};

Script FindScript() {
  if (const char* e = std::getenv("SWAPLAB_KERNEL_BUILD_SCRIPT"); e && *e) return {e, ""};
  const std::string src = SWAPLAB_SOURCE_DIR;
  if (!src.empty() && access((src + "/scripts/vm-kernel-build").c_str(), X_OK) == 0)
    return {src + "/scripts/vm-kernel-build", ""};
  const std::string inst = std::string(SWAPLAB_LIBEXEC_DIR) + "/vm-kernel-build";
  if (access(inst.c_str(), X_OK) == 0) return {inst, SWAPLAB_DATA_DIR};
  return {};
}

}  // namespace

int RunVmKernel(const VmKernelCommands& c, const VmKernelOptions& o) {
  const Script s = FindScript();
  if (s.path.empty()) {
    fmt::print(stderr,
               "swaplab vm kernel: no vm-kernel-build script (looked in {}/scripts and {}; "
               "SWAPLAB_KERNEL_BUILD_SCRIPT names one)\n",
               SWAPLAB_SOURCE_DIR, SWAPLAB_LIBEXEC_DIR);
    return 1;
  }
  std::vector<std::string> args = {"bash", s.path};
  if (c.list->parsed()) {
    args.push_back("--list");
  } else {
    args.insert(args.end(), {"--source", o.source, "--progress", o.progress});
    for (const auto& p : o.patches) args.insert(args.end(), {"--patch", p});
    std::vector<std::string> series = o.series;
    // `--name rfc-6.12` alone: the series of that name, when there is one.
    if (o.patches.empty() && series.empty() && !o.name.empty()) {
      const fs::path dir =
          fs::path(s.data_dir.empty() ? fs::path(s.path).parent_path().parent_path().string()
                                      : s.data_dir) /
          "kernel-patches" / o.name;
      std::error_code ec;
      if (fs::is_directory(dir, ec)) series.push_back(dir.string());
    }
    for (const auto& d : series) args.insert(args.end(), {"--series", d});
    for (const auto& f : o.fragments) args.insert(args.end(), {"--config-fragment", f});
    if (!o.name.empty()) args.insert(args.end(), {"--name", o.name});
    if (o.jobs > 0) args.insert(args.end(), {"--jobs", std::to_string(o.jobs)});
    if (o.check) args.push_back("--check");
    if (o.cached_only) args.push_back("--cached-only");
  }
  if (!s.data_dir.empty()) setenv("SWAPLAB_DATA_DIR", s.data_dir.c_str(), 1);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp("bash", argv.data());
  fmt::print(stderr, "swaplab vm kernel: cannot run bash {}: {}\n", s.path, std::strerror(errno));
  return 1;
}

}  // namespace swaplab::tools
