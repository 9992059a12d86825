// SPDX-License-Identifier: MIT
// Bar charts as SVG (no external assets): one bar per variant of a row of
// a scenario's table, with the figure the seed reported for the same cell
// marked on its bar.
#pragma once
#pragma GCC visibility push(default)

#include <string>
#include <vector>

namespace swaplab::report {

struct Bar {
  std::string label;
  double value = 0;        // NaN: no bar
  double seed = 0;         // NaN: the seed reported nothing for this cell
  std::string value_text;  // as the table prints it
  std::string seed_text;
};

std::string BarChartSvg(const std::string& title, const std::vector<Bar>& bars);

// A seed's cell as a number: "32.8K" → 32800, "1.30M", "10.60", "12%";
// NaN if the text is not one number.
double ParseSeedNumber(const std::string& text);

}  // namespace swaplab::report
#pragma GCC visibility pop
