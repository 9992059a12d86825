// SPDX-License-Identifier: MIT
// Booting a guest: qemu through fork + execve (with PR_SET_PDEATHSIG, so
// that qemu dies with swaplab even when swaplab is SIGKILLed), the console
// to a file, a time limit, cancellation; the work directory; the
// accelerator probe.
#include "swaplab/vm/qemu.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

extern char** environ;

namespace swaplab::vm {

namespace fs = std::filesystem;

Result<Accel> ParseAccel(std::string_view s) {
  if (s == "tcg") return Accel::kTcg;
  if (s == "kvm") return Accel::kKvm;
  if (s == "auto") return Accel::kAuto;
  return Status(-EINVAL, "accel '" + std::string(s) + "': expected tcg, kvm or auto");
}

const char* Name(Accel a) {
  switch (a) {
    case Accel::kTcg:
      return "tcg";
    case Accel::kKvm:
      return "kvm";
    case Accel::kAuto:
      return "auto";
  }
  return "?";
}

void KeepText(const std::string& dir, const std::string& name, const std::string& text) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ofstream(dir + "/" + name) << text;
}

std::string ConsoleTail(const std::string& s, int lines) {
  size_t at = s.size();
  for (int i = 0; i <= lines; ++i) {
    if (at == 0) return s;
    at = s.rfind('\n', at - 1);
    if (at == std::string::npos) return s;
  }
  return s.substr(at + 1);
}

Result<GuestKernel> ResolveGuestKernel(const VmOptions& o) {
  GuestKernel gk;
  gk.kernel = o.kernel;
  gk.modules = o.modules;
  if (gk.kernel.empty() || IsKernelSeries(gk.kernel) || IsKernelName(gk.kernel)) {
    auto k = IsKernelName(gk.kernel) ? FindBuiltKernel(gk.kernel) : FindGuestKernel("", gk.kernel);
    if (!k.ok()) return k.status();
    gk = *k;
    if (!o.modules.empty()) gk.modules = o.modules;
  } else if (gk.modules.empty()) {
    return Status(-EINVAL, "--kernel needs --modules (its lib/modules/RELEASE)");
  }
  if (gk.release.empty()) gk.release = fs::path(gk.modules).filename().string();
  return gk;
}

bool IsKernelSeries(const std::string& k) {
  int major = 0, minor = 0;
  char rest = 0;
  return std::sscanf(k.c_str(), "%d.%d%c", &major, &minor, &rest) == 2 &&
         k.find('/') == std::string::npos;
}

bool IsKernelName(const std::string& k) {
  if (k.empty() || k.find('/') != std::string::npos || IsKernelSeries(k)) return false;
  std::error_code ec;
  return !fs::exists(k, ec);
}

namespace {

std::string BuiltKernelCache(const std::string& cache) {
  if (!cache.empty()) return cache;
  const char* env = std::getenv("SWAPLAB_KERNEL_BUILD_CACHE");
  return env && *env ? env : "/var/cache/swaplab/kernel-build";
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

Result<GuestKernel> FindBuiltKernel(const std::string& name, const std::string& cache_in) {
  const std::string cache = BuiltKernelCache(cache_in);
  const std::string dir = cache + "/names/" + name;
  std::error_code ec;
  if (!fs::exists(dir + "/.built", ec)) {
    std::string names;
    for (const auto& d : fs::directory_iterator(cache + "/names", ec))
      if (fs::exists(d.path() / ".built", ec))
        names += (names.empty() ? "" : ", ") + d.path().filename().string();
    return Status(-ENOENT, "no built kernel '" + name + "' in " + cache + "/names (" +
                               (names.empty() ? "none built" : "built: " + names) +
                               "; swaplab vm kernel build --name " + name + " builds one)");
  }
  GuestKernel k;
  k.name = name;
  k.release = FirstLine(dir + "/release");
  if (k.release.empty() || k.release.find('/') != std::string::npos)
    return Status(-EINVAL, dir + "/release does not name a release");
  k.kernel = dir + "/boot/vmlinuz-" + k.release;
  k.modules = dir + "/lib/modules/" + k.release;
  std::ifstream rin(dir + "/recipe.txt");
  std::stringstream rs;
  rs << rin.rdbuf();
  k.recipe = rs.str();
  if (access(k.kernel.c_str(), R_OK) != 0) return Status(-ENOENT, "cannot read " + k.kernel);
  return k;
}

Result<GuestKernel> FindGuestKernel(const std::string& cache_in, const std::string& series) {
  std::string cache = cache_in;
  if (cache.empty()) {
    const char* env = std::getenv("SWAPLAB_GUEST_KERNEL_CACHE");
    cache = env && *env ? env : "/var/cache/swaplab/guest-kernel";
  }
  std::vector<std::string> releases;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(cache, ec))
    if (fs::exists(d.path() / ".unpacked", ec) &&
        (series.empty() || d.path().filename().string().rfind(series + ".", 0) == 0))
      releases.push_back(d.path().filename().string());
  if (releases.empty()) {
    std::string why = "no guest kernel" + (series.empty() ? "" : " " + series) + " in " + cache +
                      " (run: bash scripts/guest-kernel" + (series.empty() ? "" : " " + series) +
                      ")";
    std::ifstream un(cache + "/unavailable");
    std::string line;
    if (un && std::getline(un, line) && !line.empty())
      why = "no guest kernel in " + cache + ": " + line;
    return Status(-ENOENT, why);
  }
  // Newest by version order: compare digit runs as numbers.
  auto vless = [](const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
      if (std::isdigit(static_cast<unsigned char>(a[i])) &&
          std::isdigit(static_cast<unsigned char>(b[j]))) {
        size_t ie = i, je = j;
        while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
        while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
        const unsigned long long x = std::stoull(a.substr(i, ie - i)),
                                 y = std::stoull(b.substr(j, je - j));
        if (x != y) return x < y;
        i = ie, j = je;
      } else {
        if (a[i] != b[j]) return a[i] < b[j];
        ++i, ++j;
      }
    }
    return a.size() - i < b.size() - j;
  };
  std::sort(releases.begin(), releases.end(), vless);
  GuestKernel k;
  k.release = releases.back();
  k.kernel = cache + "/" + k.release + "/boot/vmlinuz-" + k.release;
  k.modules = cache + "/" + k.release + "/lib/modules/" + k.release;
  if (access(k.kernel.c_str(), R_OK) != 0) return Status(-ENOENT, "cannot read " + k.kernel);
  return k;
}

namespace {

// `prog` as execvp would find it (a path with a slash is taken as it is);
// "" if there is no executable of that name. Resolved before fork: the
// child may only make async-signal-safe calls.
std::string FindOnPath(const std::string& prog) {
  if (prog.find('/') != std::string::npos) return access(prog.c_str(), X_OK) == 0 ? prog : "";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    const std::string cand = (dir.empty() ? "." : dir) + "/" + prog;
    if (access(cand.c_str(), X_OK) == 0) return cand;
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  s.erase(std::remove(s.begin(), s.end(), '\r'), s.end());
  return s;
}

// Where die()'s first line is in `text` (arch/x86/kernel/dumpstack.c,
// __die_header(): "Oops: int3: 0000 [#1] PREEMPT SMP NOPTI" in 6.12,
// "int3: 0000 [#1] ..." in 6.1, "general protection fault, ...: 0000 [#1]"):
// ": " and four hex digits before "[#N]". npos when there is none.
size_t FirstOops(std::string_view text) {
  for (size_t at = text.find(" [#"); at != std::string_view::npos; at = text.find(" [#", at + 1)) {
    size_t end = at + 3;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == at + 3 || end >= text.size() || text[end] != ']' || at < 6) continue;
    const std::string_view code = text.substr(at - 6, 6);
    if (code[0] == ':' && code[1] == ' ' && std::all_of(code.begin() + 2, code.end(), [](char c) {
          return std::isxdigit(static_cast<unsigned char>(c));
        }))
      return at - 6;
  }
  return std::string_view::npos;
}

}  // namespace

bool KernelFailedBeforeInit(std::string_view console) {
  const size_t init = console.find(kGuestInitLine);
  const std::string_view before = console.substr(0, init);
  return before.find(kKernelPanicLine) != std::string_view::npos ||
         FirstOops(before) != std::string_view::npos;
}

namespace {

// What a growing file gained since the last call.
class LogTail {
 public:
  explicit LogTail(std::string path) : path_(std::move(path)) {}
  std::string Next() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return "";
    in.seekg(static_cast<std::streamoff>(pos_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    pos_ += chunk.size();
    return chunk;
  }

 private:
  std::string path_;
  size_t pos_ = 0;
};

// True once `text` is in the file (read from where the last call stopped,
// keeping a tail so a match across reads is found).
class LogWatch {
 public:
  LogWatch(std::string path, std::string text) : log_(std::move(path)), text_(std::move(text)) {}
  bool Seen() {
    if (text_.empty()) return false;
    tail_ += log_.Next();
    if (tail_.find(text_) != std::string::npos) return true;
    if (tail_.size() > text_.size()) tail_.erase(0, tail_.size() - text_.size());
    return false;
  }

 private:
  LogTail log_;
  std::string text_, tail_;
};

// The console read as it grows until the guest's init line shows: true
// once the kernel failed before it (KernelFailedBeforeInit).
class EarlyFailureWatch {
 public:
  explicit EarlyFailureWatch(std::string path) : log_(std::move(path)) {}
  bool Failed() {
    if (failed_ || done_) return failed_;
    // A line split across two reads is found: the window keeps the end of
    // the last one (longer than any line looked for).
    window_ += log_.Next();
    failed_ = KernelFailedBeforeInit(window_);
    done_ = window_.find(kGuestInitLine) != std::string::npos;
    if (window_.size() > kKeep) window_.erase(0, window_.size() - kKeep);
    return failed_;
  }

 private:
  static constexpr size_t kKeep = 512;
  LogTail log_;
  std::string window_;
  bool failed_ = false, done_ = false;
};

}  // namespace

BootSpec BootOf(std::string name, const GuestKernel& gk, std::string initrd, Accel accel,
                const VmOptions& opts) {
  BootSpec b;
  b.name = std::move(name);
  b.kernel = gk.kernel;
  b.initrd = std::move(initrd);
  b.accel = accel;
  b.timeout_s = opts.timeout_s;
  return b;
}

namespace {

// qemu's command line for `b`: the serial console goes to `log`, each drive
// is a raw virtio disk.
std::vector<std::string> QemuArgs(const VmOptions& opts, const BootSpec& b,
                                  const std::string& log) {
  std::vector<std::string> args = {
      opts.qemu, "-accel", Name(b.accel), "-m", std::to_string(opts.mem_mib), "-smp",
      std::to_string(opts.smp), "-nodefaults", "-no-reboot", "-display", "none", "-monitor", "none",
      "-serial", "file:" + log, "-kernel", b.kernel, "-initrd", b.initrd, "-append",
      // no_timer_check: under TCG on a loaded host the
      // kernel's IO-APIC timer check can fail and panic
      // ("IO-APIC + timer doesn't work!", seen here).
      "console=ttyS0 panic=-1 no_console_suspend pm_debug_messages "
      "loglevel=8 no_timer_check " +
          b.append};
  for (const Drive& d : b.drives) {
    args.push_back("-drive");
    args.push_back("file=" + d.path + ",format=raw,if=virtio,cache=writeback");
  }
  return args;
}

// The forked child: becomes qemu, its stderr in `err`. Never returns.
[[noreturn]] void ExecQemuChild(pid_t parent, const std::string& err, const std::string& exe,
                                char* const* argv, char* const* envp) {
  // The child: async-signal-safe calls only (the parent has threads).
  // Its own process group, so a terminal's Ctrl-C reaches swaplab only
  // (which then kills qemu); SIGKILL when swaplab dies, however it dies.
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(126);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY),
            errfd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (in < 0 || out < 0 || errfd < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0)
    _exit(126);
  execve(exe.c_str(), argv, envp);
  _exit(127);
}

// A running qemu watched until it exits or is killed: the interrupt flag,
// the timeout, the stop_on text and the milestones, polled every 25 ms.
class QemuWatch {
 public:
  QemuWatch(const BootSpec& b, const std::string& log, pid_t pid,
            std::chrono::steady_clock::time_point t0, const volatile std::sig_atomic_t* interrupted)
      : b_(b),
        log_(log),
        pid_(pid),
        t0_(t0),
        interrupted_(interrupted),
        watch_(log, b.stop_on),
        early_(log) {
    if (!b.milestones.empty()) awaited_.emplace(log, b.milestones[0]);
  }

  // Polls until qemu is reaped (killed first on interrupt, timeout or
  // stop_on); fills the result's flags. True when interrupted.
  bool WaitReaped(BootResult* r) {
    for (int polls = 0;; ++polls) {
      const pid_t w = waitpid(pid_, &status_, WNOHANG);
      if (w == pid_) break;
      const bool kill_now = ShouldKill(polls, r);
      if (polls % 4 == 0) CheckMilestone();
      if (kill_now) {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, &status_, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return cancelled_;
  }

  int status() const { return status_; }

 private:
  bool ShouldKill(int polls, BootResult* r) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    if (interrupted_ && *interrupted_) return cancelled_ = true;
    if (el > b_.timeout_s) return r->timed_out = true;
    if (polls % 4 == 0 && watch_.Seen()) return r->stopped = true;
    // A kernel that failed before init is given kFailureGrace to print the
    // rest (its trace, the panic line) or exit itself (panic=-1).
    if (polls % 4 == 0 && failed_at_ < 0 && early_.Failed()) failed_at_ = polls;
    return failed_at_ >= 0 && polls - failed_at_ >= kFailureGrace;
  }

  void CheckMilestone() {
    if (!awaited_ || !awaited_->Seen()) return;
    if (b_.on_milestone) b_.on_milestone(milestone_);
    if (++milestone_ < b_.milestones.size())
      awaited_.emplace(log_, b_.milestones[milestone_]);  // read again from the start
    else
      awaited_.reset();
  }

  const BootSpec& b_;
  const std::string& log_;
  const pid_t pid_;
  const std::chrono::steady_clock::time_point t0_;
  const volatile std::sig_atomic_t* const interrupted_;
  static constexpr int kFailureGrace = 80;  // polls: 2 s
  LogWatch watch_;
  EarlyFailureWatch early_;
  int failed_at_ = -1;
  size_t milestone_ = 0;
  std::optional<LogWatch> awaited_;
  bool cancelled_ = false;
  int status_ = 0;
};

}  // namespace

Result<BootResult> Boot(const VmOptions& opts, const BootSpec& b, const std::string& workdir,
                        const volatile std::sig_atomic_t* interrupted) {
  const std::string log = workdir + "/" + b.name + ".log";
  const std::string err = workdir + "/" + b.name + ".qemu.err";
  ::unlink(log.c_str());
  std::vector<std::string> args = QemuArgs(opts, b, log);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string exe = FindOnPath(opts.qemu);
  if (exe.empty()) return Status(-ENOENT, "cannot start " + opts.qemu + ": not found on PATH");
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0)
    return Status(-errno, "cannot start " + opts.qemu + ": fork: " + std::strerror(errno));
  if (pid == 0) ExecQemuChild(parent, err, exe, argv.data(), envp.data());

  BootResult r;
  QemuWatch watch(b, log, pid, t0, interrupted);
  const bool cancelled = watch.WaitReaped(&r);
  const int status = watch.status();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.console = ReadFile(log);
  r.qemu_stderr = ReadFile(err);
  r.powered_off = r.console.find("reboot: Power down") != std::string::npos;
  r.kernel_failed = KernelFailedBeforeInit(r.console);
  if (cancelled) return Status(-EINTR, "interrupted: qemu (" + b.name + ") killed");
  return r;
}

Status CopySparse(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Status(-errno, "cannot open " + from + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(in);
    return Status(-EINVAL, from + " is not a regular file");
  }
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (out < 0) {
    const int e = errno;
    ::close(in);
    return Status(-e, "cannot create " + to + ": " + std::strerror(e));
  }
  Status st_out;
  if (ftruncate(out, st.st_size) != 0) st_out = Status(-errno, "cannot size " + to);
  // Each data extent of `from`, by copy_file_range at the same offset.
  for (off_t at = 0; st_out.ok() && at < st.st_size;) {
    const off_t data = lseek(in, at, SEEK_DATA);
    if (data < 0) break;  // ENXIO: only a hole is left
    const off_t hole = lseek(in, data, SEEK_HOLE);
    if (hole < 0) {
      st_out = Status(-errno, "cannot read " + from + "'s extents");
      break;
    }
    for (off_t pos = data; pos < hole;) {
      loff_t src = pos, dst = pos;
      const ssize_t n = copy_file_range(in, &src, out, &dst, static_cast<size_t>(hole - pos), 0);
      if (n <= 0) {
        st_out = Status(n < 0 ? -errno : -EIO, "cannot copy " + from + " to " + to);
        break;
      }
      pos += n;
    }
    at = hole;
  }
  ::close(in);
  if (::close(out) != 0 && st_out.ok()) st_out = Status(-errno, "cannot write " + to);
  return st_out;
}

Result<BootResult> BootRetrying(const VmOptions& opts, BootSpec b, const std::string& workdir,
                                const volatile std::sig_atomic_t* interrupted,
                                BootRetries* retries) {
  if (b.stop_on.empty()) b.stop_on = kGuestHangLine;
  if (b.append.find("hung_task_timeout_secs") == std::string::npos)
    b.append += kGuestHangTimeoutArg;
  std::vector<std::string> saved;
  for (size_t i = 0; i < b.drives.size(); ++i) {
    saved.push_back(workdir + "/" + b.name + ".drive" + std::to_string(i) + ".before-boot");
    if (Status st = CopySparse(b.drives[i].path, saved.back()); !st.ok()) return st;
  }
  auto drop_saved = [&] {
    for (const auto& s : saved) ::unlink(s.c_str());
  };
  Result<BootResult> r = Boot(opts, b, workdir, interrupted);
  if (r.ok() && (r->stopped || r->kernel_failed)) {
    if (retries) ++(r->kernel_failed ? retries->kernel_failure : retries->hang);
    for (size_t i = 0; i < saved.size(); ++i)
      if (Status st = CopySparse(saved[i], b.drives[i].path); !st.ok()) {
        drop_saved();
        return st;
      }
    const double first_s = r->wall_s;
    r = Boot(opts, b, workdir, interrupted);
    if (r.ok()) {
      BootResult again = *r;
      again.wall_s += first_s;
      r = std::move(again);
    }
  }
  drop_saved();
  return r;
}

std::string WhyBootFailed(const BootResult& r) {
  if (r.kernel_failed) return "the guest kernel failed before its init, twice";
  if (r.stopped) return "the guest's block I/O hung twice";
  if (r.timed_out) return "the guest timed out";
  return "the guest stopped";
}

namespace {

// A failed KVM probe is remembered until the host reboots (/run is a
// tmpfs): a probe that fails waits out its 25 s on every command, and
// what it depends on is in the key (the host's boot, /dev/kvm's inode and
// change time — a reloaded kvm module makes a new one — and the guest
// kernel's file). A probe that succeeds is not remembered (it costs
// about a second).
constexpr const char* kProbeMemo = "/run/swaplab/kvm-probe-failed";

std::string ProbeKey(const std::string& kernel) {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  struct stat kvm {
  }, k{};
  if (boot.empty() || stat("/dev/kvm", &kvm) != 0 || stat(kernel.c_str(), &k) != 0) return "";
  std::ostringstream key;
  key << boot << ' ' << kvm.st_ino << ' ' << kvm.st_ctim.tv_sec << '.' << kvm.st_ctim.tv_nsec << ' '
      << kernel << ' ' << k.st_size << ' ' << k.st_mtim.tv_sec;
  return key.str();
}

// The reason of a failed probe remembered under `key`, or "".
std::string RememberedProbeFailure(const std::string& key) {
  std::ifstream in(kProbeMemo);
  std::string line;
  while (!key.empty() && std::getline(in, line))
    if (line.size() > key.size() + 1 && line.compare(0, key.size() + 1, key + '\t') == 0)
      return line.substr(key.size() + 1);
  return "";
}

void RememberProbeFailure(const std::string& key, const std::string& reason) {
  if (key.empty()) return;
  mkdir("/run/swaplab", 0755);
  std::ofstream(kProbeMemo, std::ios::app) << key << '\t' << reason << '\n';
}

}  // namespace

Result<Accel> ResolveAccel(const VmOptions& opts, const std::string& kernel,
                           const std::string& initrd, const std::string& workdir,
                           const volatile std::sig_atomic_t* interrupted, std::string* why) {
  if (opts.accel != Accel::kAuto) {
    *why = std::string(Name(opts.accel)) + " (asked for)";
    return opts.accel;
  }
  if (access("/dev/kvm", F_OK) != 0) {
    *why = "tcg (no /dev/kvm)";
    return Accel::kTcg;
  }
  if (access("/dev/kvm", R_OK | W_OK) != 0) {
    *why = "tcg (/dev/kvm not accessible)";
    return Accel::kTcg;
  }
  const std::string key = ProbeKey(kernel);
  if (std::string failed = RememberedProbeFailure(key); !failed.empty()) {
    *why = "tcg (kvm probe failed earlier in this boot of the host: " + failed + ")";
    return Accel::kTcg;
  }
  BootSpec b;
  b.name = "kvm-probe";
  b.kernel = kernel;
  b.initrd = initrd;
  b.append = "swaplab.mode=probe";
  b.accel = Accel::kKvm;
  b.timeout_s = 25;
  b.stop_on = "swaplab-init: probe ok";
  auto r = Boot(opts, b, workdir, interrupted);
  if (!r.ok()) return r.status();
  if (r->stopped || r->console.find("swaplab-init: probe ok") != std::string::npos) {
    *why = "kvm (probe boot reached init in " + std::to_string(r->wall_s).substr(0, 4) + " s)";
    return Accel::kKvm;
  }
  std::string e = r->qemu_stderr.substr(0, r->qemu_stderr.find('\n'));
  const std::string failed = e.empty() ? (r->timed_out ? "no init within 25 s" : "qemu exited") : e;
  if (!(interrupted && *interrupted)) RememberProbeFailure(key, failed);
  *why = "tcg (kvm probe failed: " + failed + ")";
  return Accel::kTcg;
}

}  // namespace swaplab::vm
