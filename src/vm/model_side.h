// The model's half of `vm hibernate` (private to the vm layer): the guest's
// trace replayed with a preset, then an image of the kernel's size written
// with the base slot source on a simulated device of the same size.
#pragma once
#include <string>

#include "swaplab/vm/vm_hibernate.h"

namespace swaplab::vm {

// Fills `m` (same metric names as the kernel's) and `info` (agreement).
// `stream_pages`: the kernel image's pages on disk, swsusp_info included;
// the model writes that many, uncompressed.
Status RunModelSide(const std::string& trace_path, const std::string& policy, int cpus,
                    uint64_t stream_pages, SideMetrics* m, ModelSideInfo* info);

}  // namespace swaplab::vm
