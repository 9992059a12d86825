// SPDX-License-Identifier: MIT
// A floating-point option's range that refuses nan and inf: CLI::Range alone
// lets "nan" through (every comparison with NaN is false), to fail later
// with exit 1 instead of a usage error (exit 2) at parse.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace swaplab::tools {

inline CLI::Validator FiniteRange(double lo, double hi) {
  const CLI::Range range(lo, hi);
  return CLI::Validator(
      [range](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !std::isfinite(v))
          return "Value " + s + " is not a finite number";
        std::string copy = s;
        return range(copy);
      },
      range.get_description());
}

}  // namespace swaplab::tools
