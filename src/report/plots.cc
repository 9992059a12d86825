// SPDX-License-Identifier: MIT
// Bar charts (plots.h).
#include "swaplab/report/plots.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "swaplab/report/svg.h"

namespace swaplab::report {

double ParseSeedNumber(const std::string& text) {
  // The figure before any remark: "10.07 (-6%)" is 10.07.
  std::string t;
  for (char c : text.substr(0, text.find('('))) {
    if (c != ',' && c != ' ') t += c;
  }
  if (t.empty()) return std::nan("");
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str()) return std::nan("");
  std::string rest(end);
  if (rest == "K" || rest == "k")
    v *= 1e3;
  else if (rest == "M")
    v *= 1e6;
  else if (rest == "G")
    v *= 1e9;
  else if (!rest.empty() && rest != "%" && rest != "s")
    return std::nan("");
  return v;
}

std::string BarChartSvg(const std::string& title, const std::vector<Bar>& bars) {
  constexpr int kLeft = 10, kLabel = 150, kBarMax = 300, kRow = 20, kTop = 24;
  double top = 0;
  bool any_seed = false;
  for (const auto& b : bars) {
    if (std::isfinite(b.value)) top = std::max(top, b.value);
    if (std::isfinite(b.seed)) {
      top = std::max(top, b.seed);
      any_seed = true;
    }
  }
  if (top <= 0) top = 1;
  const int height = kTop + static_cast<int>(bars.size()) * kRow + (any_seed ? 22 : 6);
  const int width = kLeft + kLabel + kBarMax + 140;
  std::string out;
  XmlWriter w(&out);
  w.Open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                 {"class", "plot"},
                 {"width", Num(width)},
                 {"height", Num(height)},
                 {"viewBox", fmt::format("0 0 {} {}", width, height)},
                 {"font-family", "sans-serif"},
                 {"font-size", "11"}});
  w.Leaf("title", {}, title);
  w.Leaf("text", {{"x", Num(kLeft)}, {"y", "14"}, {"font-weight", "bold"}}, title);
  int y = kTop;
  for (const auto& b : bars) {
    w.Leaf("text", {{"x", Num(kLeft)}, {"y", Num(y + 13)}}, b.label);
    const int x0 = kLeft + kLabel;
    if (std::isfinite(b.value)) {
      const double len = std::max(0.0, b.value / top * kBarMax);
      w.Open("rect", {{"class", "bar"},
                      {"x", Num(x0)},
                      {"y", Num(y + 3)},
                      {"width", Num(len, 1)},
                      {"height", Num(kRow - 6)},
                      {"fill", "#1f5fbf"}});
      w.Leaf("title", {}, fmt::format("{}: {}", b.label, b.value_text));
      w.Close();
      w.Leaf("text", {{"x", Num(x0 + len + 4, 1)}, {"y", Num(y + 13)}}, b.value_text);
    }
    if (std::isfinite(b.seed)) {
      const double sx = x0 + b.seed / top * kBarMax;
      w.Open("line", {{"class", "seed"},
                      {"x1", Num(sx, 1)},
                      {"x2", Num(sx, 1)},
                      {"y1", Num(y + 1)},
                      {"y2", Num(y + kRow - 1)},
                      {"stroke", "#d62728"},
                      {"stroke-width", "3"}});
      w.Leaf("title", {}, fmt::format("the seed reported {}", b.seed_text));
      w.Close();
    }
    y += kRow;
  }
  if (any_seed) {
    w.Empty("line", {{"x1", Num(kLeft)},
                     {"x2", Num(kLeft + 14)},
                     {"y1", Num(y + 10)},
                     {"y2", Num(y + 10)},
                     {"stroke", "#d62728"},
                     {"stroke-width", "3"}});
    w.Leaf("text", {{"x", Num(kLeft + 20)}, {"y", Num(y + 14)}},
           "the seed's figure for the same cell");
  }
  w.Finish();
  return out;
}

}  // namespace swaplab::report
