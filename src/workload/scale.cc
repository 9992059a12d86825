// ScaleScenario (shipped.h).
#include <algorithm>
#include <cmath>

#include "swaplab/workload/shipped.h"

namespace swaplab::workload {

namespace {

// v·f rounded to a multiple of `unit`, at least one unit.
uint64_t Scaled(uint64_t v, double f, uint64_t unit) {
  const double x = std::round(static_cast<double>(v) * f / static_cast<double>(unit));
  return std::max<uint64_t>(1, static_cast<uint64_t>(x)) * unit;
}

}  // namespace

void ScaleScenario(Scenario& sc, double f) {
  constexpr uint64_t kCluster = 512;
  sc.scale *= f;
  for (auto& d : sc.devices) d.pages = Scaled(d.pages, f, kCluster);
  auto scale = [&](Step& s) {
    std::visit(
        Overloaded{
            [&](FillFreeSpec& x) {
              x.region_pages = Scaled(x.region_pages, f, uint64_t{1} << x.order);
            },
            [&](HolesSpec& h) { h.region_pages = Scaled(h.region_pages, f, 2 * h.hole_pages); },
            [&](MthpSpec& m) { m.total_pages = Scaled(m.total_pages, f, 1); },
            [&](ChurnSpec& c) {
              // Fewer processes of the same size (a smaller machine): the
              // share of the device alive stays; process sizes keep their
              // folio mix.
              c.processes = Scaled(c.processes, f, 1);
              c.concurrent = Scaled(c.concurrent, f, 1);
              if (c.swapped_pages) c.swapped_pages = Scaled(c.swapped_pages, f, 1);
              // Fewer jobs at once too; still interleaved (2 at least) if they were.
              if (c.growing > 1) c.growing = std::max<uint64_t>(2, Scaled(c.growing, f, 1));
            },
            [&](UsememStepSpec& u) {
              u.spec.pages_per_process =
                  Scaled(u.spec.pages_per_process, f, uint64_t{1} << u.spec.order);
              u.spec.limit_pages = Scaled(u.spec.limit_pages, f, uint64_t{1} << u.spec.order);
            },
            [&](RotationStepSpec& r) { r.allocations = Scaled(r.allocations, f, 1); },
            [&](ImageStepSpec& i) { i.pages = Scaled(i.pages, f, 1); },
        },
        s);
  };
  for (auto& s : sc.aging) scale(s);
  for (auto& s : sc.measured) scale(s);
}

}  // namespace swaplab::workload
