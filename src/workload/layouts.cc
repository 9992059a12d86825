// SPDX-License-Identifier: MIT
// Seed 001's device states by name (layouts.h).
#include "swaplab/workload/layouts.h"

#include <string>

#include "swaplab/workload/shipped.h"

namespace swaplab::workload {

namespace {

struct LayoutName {
  RfcLayout layout;
  const char* name;
  const char* scenario;  // the shipped file whose aging phase it is
};
constexpr LayoutName kLayouts[] = {
    {RfcLayout::kFresh, "fresh", nullptr},
    {RfcLayout::kShuffled, "shuffled", "scenarios/rfc-shuffled.json"},
    {RfcLayout::kHoles, "holes", "scenarios/rfc-holes.json"},
};

const LayoutName& Entry(RfcLayout l) {
  for (const LayoutName& e : kLayouts) {
    if (e.layout == l) return e;
  }
  return kLayouts[0];
}

}  // namespace

Result<RfcLayout> ParseRfcLayout(std::string_view s) {
  for (const LayoutName& e : kLayouts) {
    if (s == e.name) return e.layout;
  }
  return Status(-EINVAL, "layout '" + std::string(s) + "': expected fresh, shuffled or holes");
}

const char* Name(RfcLayout l) { return Entry(l).name; }

Result<Scenario> LayoutScenario(RfcLayout l, double scale) {
  const char* file = Entry(l).scenario;
  if (file == nullptr) return Status(-ENOENT, std::string("layout ") + Name(l) + ": no aging");
  for (const ShippedScenario& s : ShippedScenarios()) {
    if (std::string_view(s.file) != file) continue;
    auto parsed = ParseScenario(s.json, s.file);
    if (!parsed.ok()) return parsed.status();
    Scenario sc = std::move(parsed).value();
    if (scale != 1.0) ScaleScenario(sc, scale);
    return sc;
  }
  return Status(-ENOENT, std::string("layout ") + Name(l) + ": " + file + " is not shipped");
}

Result<double> LayoutScale(RfcLayout l, uint64_t device_pages) {
  auto sc = LayoutScenario(l);
  if (!sc.ok()) return sc.status();
  return static_cast<double>(device_pages) / static_cast<double>(sc->devices[0].pages);
}

Result<LayoutReport> ApplyRfcLayout(alloc::SwapSystem& sys, int type, RfcLayout l, uint64_t seed,
                                    std::optional<double> scale) {
  auto dev = sys.Device(type);
  if (!dev.ok()) return dev.status();
  LayoutReport rep;
  if (l == RfcLayout::kFresh) return rep;
  if (!scale) {
    auto fit = LayoutScale(l, dev->max);
    if (!fit.ok()) return fit.status();
    scale = *fit;
  }
  auto sc = LayoutScenario(l, *scale);
  if (!sc.ok()) return sc.status();
  Workload w(sys, seed);
  for (const Step& step : sc->aging) {
    const Status st = std::visit(
        Overloaded{
            [&](const FillFreeSpec& f) {
              rep.pages_swapped_out += f.region_pages;
              return FillFree(w, f).status();
            },
            [&](const HolesSpec& h) {
              rep.pages_swapped_out += h.region_pages;
              return Holes(w, h).status();
            },
            [&](const auto&) {
              return Status(-EINVAL, std::string("layout ") + Name(l) + ": generator " +
                                         GeneratorName(step) + " is not one a layout runs");
            },
        },
        step);
    if (!st.ok()) {
      return Status(st.code() == -ENOMEM ? -ENOSPC : st.code(),
                    std::string("layout ") + Name(l) + ": " + st.message());
    }
  }
  dev = sys.Device(type);
  if (!dev.ok()) return dev.status();
  rep.pages_left = dev->inuse;
  return rep;
}

}  // namespace swaplab::workload
