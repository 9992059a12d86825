// Temporary areas removed on every exit path but SIGKILL.
#include "swaplab/workload/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace swaplab::workload {
namespace {

constexpr int kSlots = 16;
constexpr size_t kPathMax = 4096;
// A slot is written only while `used` is false for everyone else, and read
// by the handler only when `used` is true: the handler needs no lock.
char g_paths[kSlots][kPathMax];
std::atomic<bool> g_used[kSlots];
std::atomic<bool> g_claimed[kSlots];  // owned by a TempFile (filled or being filled)

void OnSignal(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i].load(std::memory_order_acquire)) ::unlink(g_paths[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string Clean(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}

}  // namespace

std::string TempAreaLabel() { return "swaplab-r" + std::to_string(::getpid()); }

std::string TempAreaPath(const std::string& dir, const std::string& what) {
  return dir + "/" + TempAreaLabel() + "-" + Clean(what) + ".swap";
}

TempFile::TempFile(std::string path) : path_(std::move(path)) {
  if (path_.size() >= kPathMax) return;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    // claim the slot first (never visible to the handler until filled)
    if (!g_claimed[i].compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_paths[i], path_.c_str(), path_.size() + 1);
    g_used[i].store(true, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempFile::~TempFile() {
  if (path_.empty()) return;
  ::unlink(path_.c_str());
  if (slot_ >= 0) {
    g_used[slot_].store(false, std::memory_order_release);
    g_claimed[slot_].store(false, std::memory_order_release);
  }
}

void InstallTempFileCleanup() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  // SIGABRT too: an exception no one catches (in a worker thread, say)
  // ends in abort(), which would leave the files behind.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace swaplab::workload
