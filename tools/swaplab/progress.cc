// SPDX-License-Identifier: MIT
// The progress bar on stderr (progress.h).
#include "progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>

#include "swaplab/alloc/printable.h"

namespace swaplab::tools {

namespace {

constexpr auto kRedraw = std::chrono::milliseconds(100);  // at most ten draws a second
constexpr int kWidth = 20;

}  // namespace

ProgressBar::ProgressBar(const std::string& mode, uint64_t total, std::string unit, Unit kind)
    : on_(ProgressOn(mode)),
      total_(std::max<uint64_t>(1, total)),
      unit_(std::move(unit)),
      kind_(kind),
      t0_(std::chrono::steady_clock::now()),
      last_(t0_) {}

void ProgressBar::SetTotal(uint64_t total) { total_ = std::max<uint64_t>(1, total); }

void ProgressBar::Update(uint64_t done, const std::string& note) {
  if (!on_) return;
  done_ = std::min(done, total_);
  note_ = note;
  const auto now = std::chrono::steady_clock::now();
  if (!started_) {
    started_ = true;
    first_ = now;
    first_done_ = done_;
  }
  const bool total_now = done_ == total_ && !drawn_total_;
  if (drawn_ && !total_now && now - last_ < kRedraw) return;
  last_ = now;
  drawn_ = true;
  drawn_total_ |= done_ == total_;
  Draw();
}

void ProgressBar::Draw() {
  const double s = std::chrono::duration<double>(last_ - t0_).count();
  const double rs = std::chrono::duration<double>(last_ - first_).count();
  const double rate =
      rs > 0 && done_ >= first_done_ ? static_cast<double>(done_ - first_done_) / rs : 0.0;
  const int filled = static_cast<int>(kWidth * done_ / total_);
  std::string counts;
  if (kind_ == Unit::kBytes) {
    counts = fmt::format("{:.1f}/{:.1f} MB, {:.1f} MB/s", static_cast<double>(done_) / 1e6,
                         static_cast<double>(total_) / 1e6, rate / 1e6);
  } else {
    counts = fmt::format("{}/{} {}, {:.1f} {}/s", done_, total_, unit_, rate, unit_);
  }
  fmt::print(stderr, "\r\033[K[{}{}] {:3}% {}, {:.1f} s{}{}", std::string(filled, '#'),
             std::string(kWidth - filled, '-'), 100 * done_ / total_, counts, s,
             note_.empty() ? "" : "  ", Printable(note_, 200));
  std::fflush(stderr);
}

void ProgressBar::End() {
  if (!on_ || !drawn_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

bool ProgressOn(const std::string& mode) {
  return mode == "always" || (mode == "auto" && ::isatty(2));
}

void AddProgressOption(CLI::App* c, std::string& mode) {
  c->add_option("--progress", mode,
                "a progress bar on stderr: always, never, or auto (only when stderr is a terminal)")
      ->check(CLI::IsMember({"always", "never", "auto"}))
      ->capture_default_str();
}

}  // namespace swaplab::tools
