// SPDX-License-Identifier: MIT
// Looking up a device for an entry point, with a reference held (kernel:
// get_swap_device / put_swap_device).
#pragma once

#include <string>

#include "alloc/system_state.h"

namespace swaplab::alloc {

class DeviceRef {
 public:
  DeviceRef() = default;
  explicit DeviceRef(SwapDevice* d) : d_(d) {}
  DeviceRef(DeviceRef&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  DeviceRef& operator=(DeviceRef&&) = delete;
  DeviceRef(const DeviceRef&) = delete;
  ~DeviceRef() {
    if (d_) d_->Put();
  }
  SwapDevice* operator->() const { return d_; }
  SwapDevice& operator*() const { return *d_; }

 private:
  SwapDevice* d_ = nullptr;
};

// A referenced device for [offset, offset + nr) or an error naming `op`.
inline Result<SwapDevice*> GetDeviceFor(SwapSystem::State& s, SwapEntry e, uint64_t nr,
                                        const char* op) {
  SwapDevice* d = s.Dev(e.type);
  if (d == nullptr || !d->TryGet())
    return Status(-EINVAL, std::string(op) + ": no swap device of type " + std::to_string(e.type));
  if (e.offset == 0 || nr == 0 || e.offset >= d->max || nr > d->max - e.offset) {
    const uint64_t max = d->max;
    d->Put();
    return Status(-EINVAL, std::string(op) + ": slots [" + std::to_string(e.offset) + ", " +
                               std::to_string(e.offset + nr) + ") are outside device " +
                               std::to_string(e.type) + " (offsets 1.." + std::to_string(max - 1) +
                               ")");
  }
  return d;
}

// The device of a folio in the swap cache. No reference is taken: while
// the folio holds slots the device's inuse is not 0, so swapoff cannot get
// past try_to_unuse and free the clusters; the folio lock keeps the folio
// in the cache for the duration of the call.
inline SwapDevice* CachedFolioDevice(SwapSystem::State& s, const Folio& f) {
  return s.Dev(f.swap().type);
}

}  // namespace swaplab::alloc
