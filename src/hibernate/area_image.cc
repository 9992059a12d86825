// SPDX-License-Identifier: MIT
// A swap area and the image on it, read-only (area_image.h).
#include "swaplab/hibernate/area_image.h"

#include "swaplab/area/io_engine.h"

namespace swaplab::hibernate {

Result<AreaWithImage> InspectAreaWithImage(const std::string& path) {
  auto info = area::InspectArea(path);
  if (!info.ok()) return info.status();
  AreaWithImage r{std::move(info).value(), Status::Ok(), std::nullopt};
  r.swapon = area::ValidateArea(r.area);
  if (!r.area.header.hibernation) return r;
  area::EngineOptions eo;
  eo.limits = r.area.limits;
  eo.writable = false;
  auto engine = area::OpenPosixEngine(r.area.path, eo);
  if (!engine.ok()) {
    r.image = Result<ImageInspection>(engine.status());
  } else {
    r.image = InspectImage(**engine, 0, r.area.size_bytes / area::kPageSize);
  }
  return r;
}

}  // namespace swaplab::hibernate
