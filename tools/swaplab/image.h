// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/area/io_engine_factory.h"

namespace swaplab::tools {

struct ImageOptions {
  std::string area;
  std::string size = "64M";
  std::string source = "free-clusters-sorted";
  std::string batch = "per-run";
  std::string compress = "none";
  std::string policy{alloc::kRfcBasePreset};
  std::vector<std::string> knobs;  // --knob NAME=VALUE
  std::string bio_capacity = "exact";
  uint32_t max_pages = 0;
  uint64_t seed = 1;
  double zero_share = 0.1;
  std::string layout = "fresh";        // the RFC's device states before the write
  std::string memory_budget = "1G";    // write copies in flight before a drain (§6.1)
  std::string snapshot_memory = "4G";  // snapshots up to this size are built before the timed write
  unsigned threads = 0;                // compressor / decompressor threads (0: the kernel's rule)
  bool json = false;
  bool consume = false;    // read: restore the swap signature as resume does
  std::string dump;        // read: write the decompressed stream here
  bool kernel_io = false;  // read: issue the kernel's resume reads (sync map and metadata pages)
  std::string progress = "auto";                  // write, read: --progress always|never|auto
  area::EngineKind io = area::EngineKind::kAuto;  // --io
};

struct ImageCommands {
  CLI::App* image = nullptr;
  CLI::App* write = nullptr;
  CLI::App* read = nullptr;
  CLI::App* inspect = nullptr;
};

ImageCommands AddImage(CLI::App& app, ImageOptions& o);
int RunImage(const ImageCommands& c, const ImageOptions& o);
// read and inspect (image_read.cc).
int RunImageReadInspect(const ImageCommands& c, const ImageOptions& o);

}  // namespace swaplab::tools
