// SPDX-License-Identifier: MIT
// `swaplab reproduce --html DIR` / `swaplab run --html DIR`: one
// self-contained page (inline SVG and CSS, no script, nothing loaded from
// anywhere) with each scenario's setup, its table with the seed's figures
// beside ours, bar charts of the rows an mm developer compares, and the
// cluster maps before and after the image write per strategy.
#pragma once
#pragma GCC visibility push(default)

#include <string>
#include <vector>

#include "swaplab/report/map_sources.h"
#include "swaplab/workload/scenario_runner.h"

namespace swaplab::report {

struct HtmlOptions {
  std::string command;  // what was run, for the header
  double scale = 1.0;
  double wall_seconds = 0;
  uint64_t map_cells = 1024;  // per map panel at most (aggregated past it)
};

class XmlWriter;

// The start of such a page: <!DOCTYPE html>, <html>, its <head> (title and
// the report's stylesheet, inline) and <body>, left open (XmlWriter::Finish
// closes them).
void OpenHtmlPage(XmlWriter& w, const std::string& title);

// An SVG document made by an XmlWriter, as markup inside such a page (the
// SVG namespace is implied in HTML: no URL in the page at all).
std::string InlineSvg(std::string svg);

std::string RenderHtml(const std::vector<workload::ScenarioResult>& results, const MapCapture* maps,
                       const HtmlOptions& o);

}  // namespace swaplab::report
#pragma GCC visibility pop
