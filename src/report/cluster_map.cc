// SPDX-License-Identifier: MIT
// Cluster maps (cluster_map.h).
#include "swaplab/report/cluster_map.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>

#include "swaplab/report/svg.h"

namespace swaplab::report {

namespace {

struct KindInfo {
  const char* name;
  const char* colour;
};
constexpr std::array<KindInfo, kCellKinds> kKinds = {{
    {"free", "#e4e4e4"},
    {"nonfull", "#f2a02c"},
    {"frag", "#d62728"},
    {"full", "#1f5fbf"},
    {"discard", "#2ca02c"},
    {"reserved", "#8e44ad"},
    {"image", "#111111"},
    {"off-list", "#b8a000"},
    {"not image", "#f4f4f4"},
}};

CellKind FromFlag(alloc::ClusterFlag f) {
  switch (f) {
    case alloc::ClusterFlag::kFree:
      return CellKind::kFree;
    case alloc::ClusterFlag::kNonfull:
      return CellKind::kNonfull;
    case alloc::ClusterFlag::kFrag:
      return CellKind::kFrag;
    case alloc::ClusterFlag::kFull:
      return CellKind::kFull;
    case alloc::ClusterFlag::kDiscard:
      return CellKind::kDiscard;
    case alloc::ClusterFlag::kNone:
      return CellKind::kOffList;
  }
  return CellKind::kOffList;
}

// Runs starting clusters: stretches of consecutive clusters holding image
// slots.
std::vector<uint64_t> ClusterStretches(const std::vector<ClusterCell>& cells) {
  std::vector<uint64_t> starts;
  for (size_t i = 0; i < cells.size(); ++i)
    if (cells[i].image_slots && (i == 0 || !cells[i - 1].image_slots)) starts.push_back(i);
  return starts;
}

// One drawn cell: clusters [first, last] of a map.
struct Drawn {
  uint64_t first = 0, last = 0;
  CellKind kind = CellKind::kFree;
  double fill = 0;  // slots in use / slots
  std::string title;
};

Drawn Aggregate(const ClusterMap& m, uint64_t first, uint64_t last) {
  Drawn d{first, last, CellKind::kFree, 0, {}};
  std::array<uint64_t, kCellKinds> by_kind{};
  uint64_t used = 0, image = 0, maps = 0;
  for (uint64_t i = first; i <= last; ++i) {
    const ClusterCell& c = m.cells[i];
    ++by_kind[static_cast<size_t>(c.kind)];
    used += c.count;
    image += c.image_slots;
    maps += c.map_pages;
  }
  const uint64_t n = last - first + 1;
  d.fill = static_cast<double>(used) / static_cast<double>(n * m.cluster_size);
  if (n == 1) {
    const ClusterCell& c = m.cells[first];
    d.kind = c.kind;
    d.title = fmt::format("cluster {}: {}, order {}, {}/{} slots in use", first, Name(c.list),
                          static_cast<int>(c.order), c.count, m.cluster_size);
    if (c.kind == CellKind::kNotImage || (c.kind == CellKind::kImage && c.list == c.kind))
      d.title = fmt::format("cluster {}: {}", first, Name(c.kind));
  } else {
    // The kind most of them have; image as soon as one holds an image slot.
    d.kind = by_kind[static_cast<size_t>(CellKind::kImage)]
                 ? CellKind::kImage
                 : static_cast<CellKind>(std::max_element(by_kind.begin(), by_kind.end()) -
                                         by_kind.begin());
    d.title = fmt::format("clusters {}-{}:", first, last);
    const char* sep = " ";
    for (int k = 0; k < kCellKinds; ++k) {
      if (!by_kind[k]) continue;
      d.title += fmt::format("{}{} {}", sep, by_kind[k], Name(static_cast<CellKind>(k)));
      sep = ", ";
    }
    d.title += fmt::format("; {}/{} slots in use", used, n * m.cluster_size);
  }
  if (image) d.title += fmt::format("; image: {} slots", image);
  if (maps) d.title += fmt::format(" ({} map pages)", maps);
  return d;
}

}  // namespace

const char* Name(CellKind k) { return kKinds[static_cast<size_t>(k)].name; }
const char* Colour(CellKind k) { return kKinds[static_cast<size_t>(k)].colour; }

Result<ClusterMap> SnapshotClusters(const alloc::SwapSystem& sys, int type) {
  auto dev = sys.Device(type);
  if (!dev.ok()) return dev.status();
  ClusterMap m;
  m.cluster_size = sys.cluster_size();
  m.cells.resize(dev->nr_clusters);
  const auto [rstart, rcount] = sys.HibernationReserve(type);
  for (uint64_t i = 0; i < dev->nr_clusters; ++i) {
    auto c = sys.Cluster(type, i);
    if (!c.ok()) return c.status();
    ClusterCell& cell = m.cells[i];
    cell.count = c->count;
    cell.order = static_cast<int8_t>(c->order);
    cell.list = FromFlag(c->flag);
    cell.kind = i >= rstart && i < rstart + rcount ? CellKind::kReserved : cell.list;
  }
  if (rcount)
    m.notes.push_back(
        fmt::format("clusters {}-{}: the hibernation reservation", rstart, rstart + rcount - 1));
  return m;
}

void MarkImageByDelta(ClusterMap& after, const ClusterMap& before) {
  for (size_t i = 0; i < after.cells.size() && i < before.cells.size(); ++i) {
    ClusterCell& c = after.cells[i];
    if (c.count > before.cells[i].count) {
      c.image_slots = c.count - before.cells[i].count;
      c.kind = CellKind::kImage;
    }
  }
  after.run_starts = ClusterStretches(after.cells);
  after.runs_note =
      "image runs: stretches of consecutive clusters whose count grew during the write (cluster "
      "granularity)";
}

void MarkImageSlots(ClusterMap& m, const std::vector<uint64_t>& stream,
                    const std::vector<uint64_t>& map, bool count_slots) {
  std::vector<uint64_t> slots;
  slots.reserve(stream.size() + map.size());
  auto add = [&](uint64_t dblock, bool is_map) {
    if (dblock / m.cluster_size >= m.cells.size()) return;  // the chain walk bounds them
    ClusterCell& c = m.cells[dblock / m.cluster_size];
    ++c.image_slots;
    c.count += count_slots;
    c.map_pages += is_map;
    c.kind = CellKind::kImage;
    if (count_slots) c.list = CellKind::kImage;
    slots.push_back(dblock);
  };
  for (uint64_t d : stream) add(d, false);
  for (uint64_t d : map) add(d, true);
  std::sort(slots.begin(), slots.end());
  m.run_starts.clear();
  for (size_t i = 0; i < slots.size(); ++i)
    if (i == 0 || slots[i] != slots[i - 1] + 1) m.run_starts.push_back(slots[i] / m.cluster_size);
  m.runs_note =
      "image runs: stretches of consecutive dblocks (§10.4), numbered from the disk start";
}

ClusterMap ImageAreaMap(const hibernate::ImageChain& chain, uint64_t device_pages,
                        uint32_t cluster_size) {
  ClusterMap m;
  m.cluster_size = cluster_size;
  m.cells.resize((device_pages + cluster_size - 1) / cluster_size);
  for (auto& c : m.cells) c.kind = c.list = CellKind::kNotImage;
  MarkImageSlots(m, chain.entries, chain.map_dblocks, true);
  m.notes.push_back(fmt::format("{} stream pages and {} map pages on the area",
                                chain.entries.size(), chain.map_dblocks.size()));
  return m;
}

namespace {

// The drawing of one SVG: the grid's geometry, shared by every panel, and
// what the legend collects while the panels are drawn.
class MapSvgDrawer {
 public:
  MapSvgDrawer(const std::vector<MapPanel>& panels, const MapSvgOptions& o);
  void DrawPanel(const MapPanel& p);
  void DrawLegend();
  std::string Finish(const std::string& title) const;

 private:
  static constexpr int kMargin = 10, kCaption = 18, kGap = 14, kLegendRow = 16;

  // Which run each cell is numbered with (-1: none) and whether more start there.
  struct RunLabels {
    std::vector<int64_t> first;
    std::vector<bool> several;
  };
  RunLabels LabelRuns(const ClusterMap& m, uint64_t ncells) const;
  void DrawCells(const ClusterMap& m, uint64_t ncells);
  void DrawRunNumbers(const RunLabels& labels);
  void NotePanel(const MapPanel& p, bool overlay);
  void DrawSwatches();
  void DrawNotes();
  int CellX(uint64_t i) const { return kMargin + static_cast<int>(i % columns_) * cell_; }
  int CellY(uint64_t i) const { return y_ + static_cast<int>(i / columns_) * cell_; }

  const MapSvgOptions& o_;
  int cell_;
  uint64_t max_cells_;
  uint64_t per_cell_ = 1;
  uint64_t columns_ = 1;
  int width_ = 0;
  int y_ = kMargin;
  std::array<bool, kCellKinds> used_{};
  std::vector<std::string> legend_notes_;
  std::string body_;
  XmlWriter w_{&body_};
};

MapSvgDrawer::MapSvgDrawer(const std::vector<MapPanel>& panels, const MapSvgOptions& o)
    : o_(o), cell_(std::max(2, o.cell_px)), max_cells_(std::max<uint64_t>(1, o.max_cells)) {
  uint64_t max_clusters = 0;
  for (const auto& p : panels) max_clusters = std::max<uint64_t>(max_clusters, p.map->cells.size());
  per_cell_ = std::max<uint64_t>(1, (max_clusters + max_cells_ - 1) / max_cells_);
  columns_ = std::clamp<uint64_t>((max_clusters + per_cell_ - 1) / per_cell_, 1,
                                  static_cast<uint64_t>(std::max(1, o.columns)));
  if (per_cell_ > 1)
    legend_notes_.push_back(fmt::format(
        "aggregated: each cell is {} clusters (more clusters than the {} cells drawn); its colour "
        "is the list most of them are on, image if one holds an image slot; shade: slots in use",
        per_cell_, max_cells_));
  else
    legend_notes_.push_back("one cell per cluster in disk order, rows wrap; shade: slots in use");
  width_ = std::max<int>(560, static_cast<int>(columns_) * cell_ + 2 * kMargin);
}

void MapSvgDrawer::DrawPanel(const MapPanel& p) {
  const ClusterMap& m = *p.map;
  const uint64_t ncells = (m.cells.size() + per_cell_ - 1) / per_cell_;
  w_.Leaf("text", {{"x", Num(kMargin)}, {"y", Num(y_ + 13)}, {"class", "caption"}},
          fmt::format("{} ({} clusters of {} slots)", p.caption, m.cells.size(), m.cluster_size));
  y_ += kCaption;
  w_.Open("g", {{"class", "map"}});
  const bool overlay =
      o_.number_runs && !m.run_starts.empty() && m.run_starts.size() <= o_.max_run_labels;
  const RunLabels labels = LabelRuns(m, overlay ? ncells : 0);
  DrawCells(m, ncells);
  if (overlay) DrawRunNumbers(labels);
  w_.Close();
  y_ += static_cast<int>((ncells + columns_ - 1) / columns_) * cell_ + kGap;
  NotePanel(p, overlay);
}

// With ncells 0 (no overlay) labels nothing.
MapSvgDrawer::RunLabels MapSvgDrawer::LabelRuns(const ClusterMap& m, uint64_t ncells) const {
  RunLabels l{std::vector<int64_t>(ncells, -1), std::vector<bool>(ncells, false)};
  if (!ncells) return l;
  for (size_t r = 0; r < m.run_starts.size(); ++r) {
    const uint64_t c = m.run_starts[r] / per_cell_;
    if (c >= ncells) continue;
    if (l.first[c] < 0)
      l.first[c] = static_cast<int64_t>(r);
    else
      l.several[c] = true;
  }
  return l;
}

void MapSvgDrawer::DrawCells(const ClusterMap& m, uint64_t ncells) {
  for (uint64_t i = 0; i < ncells; ++i) {
    const uint64_t first = i * per_cell_;
    const uint64_t last = std::min<uint64_t>(m.cells.size(), first + per_cell_) - 1;
    const Drawn d = Aggregate(m, first, last);
    used_[static_cast<size_t>(d.kind)] = true;
    const bool empty = d.kind == CellKind::kFree || d.kind == CellKind::kNotImage || d.fill == 0;
    const std::string opacity = empty ? "1" : Num(0.35 + 0.65 * d.fill);
    w_.Open("rect", {{"class", "c"},
                     {"x", Num(CellX(i))},
                     {"y", Num(CellY(i))},
                     {"width", Num(cell_ - 1)},
                     {"height", Num(cell_ - 1)},
                     {"fill", Colour(d.kind)},
                     {"fill-opacity", opacity}});
    w_.Leaf("title", {}, d.title);
    w_.Close();
  }
}

void MapSvgDrawer::DrawRunNumbers(const RunLabels& labels) {
  w_.Open("g", {{"class", "runs"}});
  for (uint64_t i = 0; i < labels.first.size(); ++i) {
    if (labels.first[i] < 0) continue;
    w_.Leaf("text",
            {{"x", Num(CellX(i) + 0.5)}, {"y", Num(CellY(i) + cell_ - 1.5)}, {"class", "run"}},
            fmt::format("{}{}", labels.first[i] + 1, labels.several[i] ? "+" : ""));
  }
  w_.Close();
}

void MapSvgDrawer::NotePanel(const MapPanel& p, bool overlay) {
  const ClusterMap& m = *p.map;
  if (!m.runs_note.empty()) {
    std::string note = fmt::format("{}: {} ({} runs)", p.caption, m.runs_note, m.run_starts.size());
    if (o_.number_runs && m.run_starts.size() > o_.max_run_labels)
      note += fmt::format("; too many to number (over {})", o_.max_run_labels);
    else if (overlay)
      note += "; numbers: the run starting in the cell (+: more start there)";
    legend_notes_.push_back(note);
  }
  for (const auto& n : m.notes) legend_notes_.push_back(p.caption + ": " + n);
}

// The legend: a swatch per kind drawn, then the notes.
void MapSvgDrawer::DrawLegend() {
  w_.Open("g", {{"class", "legend"}});
  DrawSwatches();
  y_ += kLegendRow + 4;
  DrawNotes();
  w_.Close();
  y_ += kMargin;
}

void MapSvgDrawer::DrawSwatches() {
  int lx = kMargin;
  for (int k = 0; k < kCellKinds; ++k) {
    if (!used_[k]) continue;
    const auto kind = static_cast<CellKind>(k);
    if (lx + 110 > width_) {
      lx = kMargin;
      y_ += kLegendRow;
    }
    w_.Empty("rect", {{"class", "key"},
                      {"x", Num(lx)},
                      {"y", Num(y_)},
                      {"width", "12"},
                      {"height", "12"},
                      {"fill", Colour(kind)},
                      {"stroke", "#888"}});
    w_.Leaf("text", {{"x", Num(lx + 16)}, {"y", Num(y_ + 10)}, {"class", "keytext"}}, Name(kind));
    lx += 110;
  }
}

// Notes wrapped at spaces to the picture's width (about 6 px a character).
void MapSvgDrawer::DrawNotes() {
  const size_t line_chars = static_cast<size_t>(std::max(40, (width_ - 2 * kMargin) / 6));
  for (const auto& n : legend_notes_) {
    for (size_t at = 0; at < n.size();) {
      size_t end = n.size();
      if (end - at > line_chars) {
        end = n.rfind(' ', at + line_chars);
        if (end == std::string::npos || end <= at) end = at + line_chars;
      }
      w_.Leaf("text", {{"x", Num(kMargin)}, {"y", Num(y_ + 10)}, {"class", "note"}},
              n.substr(at, end - at));
      y_ += kLegendRow;
      at = end < n.size() && n[end] == ' ' ? end + 1 : end;
    }
  }
}

std::string MapSvgDrawer::Finish(const std::string& title) const {
  std::string out;
  XmlWriter svg(&out);
  svg.Open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"width", Num(width_)},
                   {"height", Num(y_)},
                   {"viewBox", fmt::format("0 0 {} {}", width_, y_)},
                   {"font-family", "sans-serif"}});
  svg.Leaf("title", {}, title);
  svg.Leaf("style", {},
           ".caption{font-size:13px;font-weight:bold}.keytext,.note{font-size:11px}"
           ".run{font-size:5px;fill:#fff}");
  svg.Raw(body_);
  svg.Finish();
  return out;
}

}  // namespace

std::string ClusterMapSvg(const std::string& title, const std::vector<MapPanel>& panels,
                          const MapSvgOptions& o) {
  MapSvgDrawer d(panels, o);
  for (const auto& p : panels) d.DrawPanel(p);
  d.DrawLegend();
  return d.Finish(title);
}

}  // namespace swaplab::report
