// SPDX-License-Identifier: MIT
// The guest's initramfs: a newc cpio archive written in memory, modules and
// their dependencies found through modules.order and .modinfo.
#include "swaplab/vm/initramfs.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

extern char** environ;

namespace swaplab::vm {

namespace {

std::string Hex8(uint32_t v) {
  char b[9];
  std::snprintf(b, sizeof b, "%08X", v);
  return b;
}

void Pad4(std::string* a) {
  while (a->size() % 4) a->push_back('\0');
}

std::string Norm(std::string m) {
  for (char& c : m)
    if (c == '-') c = '_';
  return m;
}

// The module's base name of a modules.order / modules.builtin line.
std::string BaseName(const std::string& line) {
  std::string n = line.substr(line.rfind('/') + 1);
  const size_t ko = n.find(".ko");
  if (ko != std::string::npos) n.resize(ko);
  return Norm(n);
}

bool IsStatic(const std::string& path) {
  // A static executable has no PT_INTERP: look for the loader's name.
  auto s = ReadHostFile(path);
  return s.ok() && s->size() > 4 &&
         s->compare(0, 4,
                    "\x7f"
                    "ELF") == 0 &&
         s->find("/lib64/ld-linux") == std::string::npos &&
         s->find("/lib/ld-linux") == std::string::npos;
}

class ModuleSet {
 public:
  ModuleSet(std::string dir, std::string tmp) : dir_(std::move(dir)), tmp_(std::move(tmp)) {}

  Status Load() {
    // A kernel built without modules (scripts/vm-kernel-build) has
    // everything the vm commands use built in.
    if (access((dir_ + "/modules.none").c_str(), F_OK) == 0) {
      no_modules_ = true;
      return Status::Ok();
    }
    auto order = ReadHostFile(dir_ + "/modules.order");
    if (!order.ok()) return Status(-ENOENT, dir_ + " has no modules.order");
    std::istringstream in(*order);
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) paths_.emplace(BaseName(l), l);
    if (auto b = ReadHostFile(dir_ + "/modules.builtin"); b.ok()) {
      std::istringstream bi(*b);
      for (std::string l; std::getline(bi, l);)
        if (!l.empty()) builtin_.insert(BaseName(l));
    }
    return Status::Ok();
  }

  // Adds `name` after its dependencies (depth first, as modprobe orders them).
  Status Add(const std::string& name) {
    const std::string m = Norm(name);
    if (no_modules_ || !seen_.insert(m).second || builtin_.count(m)) return Status::Ok();
    auto it = paths_.find(m);
    if (it == paths_.end()) return Status(-ENOENT, "no module " + m + " in " + dir_);
    const std::string base = dir_ + "/" + it->second;
    const std::string out = tmp_ + "/" + m + ".ko";
    Status st = Status(-ENOENT, "no file for module " + m + " (" + base + "[.xz|.zst|.gz])");
    if (access(base.c_str(), R_OK) == 0)
      st = RunToFile({"cat", base}, out);
    else if (access((base + ".xz").c_str(), R_OK) == 0)
      st = RunToFile({"xz", "-dc", base + ".xz"}, out);
    else if (access((base + ".zst").c_str(), R_OK) == 0)
      st = RunToFile({"zstd", "-qdc", base + ".zst"}, out);
    else if (access((base + ".gz").c_str(), R_OK) == 0)
      st = RunToFile({"gzip", "-dc", base + ".gz"}, out);
    if (!st.ok()) return st;
    auto data = ReadHostFile(out);
    if (!data.ok()) return data.status();
    // .modinfo holds NUL-separated key=value strings; depends= lists the
    // modules this one needs, comma-separated.
    const std::string key = std::string("\0depends=", 9);
    const size_t at = data->find(key);
    if (at != std::string::npos) {
      const size_t b = at + key.size();
      const std::string deps = data->substr(b, data->find('\0', b) - b);
      std::istringstream di(deps);
      for (std::string d; std::getline(di, d, ',');)
        if (!d.empty())
          if (Status s = Add(d); !s.ok()) return s;
    }
    order_.push_back(m);
    files_[m] = std::move(*data);
    return Status::Ok();
  }

  const std::vector<std::string>& order() const { return order_; }
  const std::string& file(const std::string& m) const { return files_.at(m); }

 private:
  std::string dir_, tmp_;
  std::map<std::string, std::string> paths_;  // base name -> path in modules.order
  std::set<std::string> builtin_, seen_;
  bool no_modules_ = false;
  std::vector<std::string> order_;
  std::map<std::string, std::string> files_;
};

}  // namespace

Result<std::string> ReadHostFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(-ENOENT, "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status RunToFile(std::vector<std::string> args, const std::string& out, const std::string& err) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!err.empty())
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Status(-EIO, std::string("cannot run ") + argv[0] + ": " + std::strerror(rc));
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return Status(-EIO, std::string(argv[0]) + " failed on " + args.back());
  return Status::Ok();
}

void AppendCpioEntry(std::string* a, const std::string& name, uint32_t mode,
                     const std::string& data, uint32_t ino) {
  // c_magic, then 13 fields of 8 hex digits: ino mode uid gid nlink mtime
  // filesize devmajor devminor rdevmajor rdevminor namesize check.
  *a += "070701";
  const uint32_t nlink = S_ISDIR(mode) ? 2 : 1;
  for (uint32_t v : {ino, mode, 0u, 0u, nlink, 0u, static_cast<uint32_t>(data.size()), 0u, 0u, 0u,
                     0u, static_cast<uint32_t>(name.size() + 1), 0u})
    *a += Hex8(v);
  *a += name;
  a->push_back('\0');
  Pad4(a);
  *a += data;
  Pad4(a);
}

void AppendCpioTrailer(std::string* a) { AppendCpioEntry(a, "TRAILER!!!", 0, "", 0); }

Result<InitramfsReport> WriteInitramfs(const std::string& out, const InitramfsSpec& spec,
                                       const std::string& tmpdir) {
  std::string busybox = spec.busybox;
  if (busybox.empty()) {
    for (const char* b : {"/bin/busybox", "/usr/bin/busybox"})
      if (access(b, X_OK) == 0 && IsStatic(b)) {
        busybox = b;
        break;
      }
    if (busybox.empty()) return Status(-ENOENT, "no static busybox (install busybox-static)");
  }
  auto bb = ReadHostFile(busybox);
  if (!bb.ok()) return bb.status();
  Result<std::string> agent = std::string();
  if (!spec.agent.empty()) agent = ReadHostFile(spec.agent);
  if (!agent.ok()) return Status(-ENOENT, "no guest agent at " + spec.agent);
  ModuleSet mods(spec.modules_dir, tmpdir);
  if (Status st = mods.Load(); !st.ok()) return st;
  for (const auto& m : spec.modules)
    if (Status st = mods.Add(m); !st.ok()) return st;

  std::string a;
  uint32_t ino = 1;
  for (const char* d : {"bin", "sbin", "dev", "proc", "sys", "tmp", "lib", "lib/modules"})
    AppendCpioEntry(&a, d, S_IFDIR | 0755, "", ino++);
  AppendCpioEntry(&a, "bin/busybox", S_IFREG | 0755, *bb, ino++);
  if (!spec.agent.empty())
    AppendCpioEntry(&a, "bin/swaplab_guest_agent", S_IFREG | 0755, *agent, ino++);
  AppendCpioEntry(&a, "init", S_IFREG | 0755, InitScript(), ino++);
  std::set<std::string> dirs = {"bin", "sbin", "dev", "proc", "sys", "tmp", "lib", "lib/modules"};
  for (const InitramfsFile& f : spec.files) {
    if (f.guest.size() < 2 || f.guest[0] != '/' || f.guest.find("/../") != std::string::npos)
      return Status(-EINVAL, "initramfs path " + f.guest + " is not absolute");
    auto data = ReadHostFile(f.host);
    if (!data.ok()) return data.status();
    const std::string name = f.guest.substr(1);
    for (size_t at = name.find('/'); at != std::string::npos; at = name.find('/', at + 1))
      if (dirs.insert(name.substr(0, at)).second)
        AppendCpioEntry(&a, name.substr(0, at), S_IFDIR | 0755, "", ino++);
    AppendCpioEntry(&a, name, S_IFREG | (f.mode & 07777), *data, ino++);
  }
  std::string list;
  for (const auto& m : mods.order()) {
    AppendCpioEntry(&a, "lib/modules/" + m + ".ko", S_IFREG | 0644, mods.file(m), ino++);
    list += m + "\n";
  }
  AppendCpioEntry(&a, "modules.list", S_IFREG | 0644, list, ino++);
  AppendCpioTrailer(&a);
  std::ofstream o(out, std::ios::binary | std::ios::trunc);
  o.write(a.data(), static_cast<std::streamsize>(a.size()));
  if (!o) return Status(-EIO, "cannot write " + out);
  InitramfsReport r;
  r.modules = mods.order();
  r.bytes = a.size();
  return r;
}

}  // namespace swaplab::vm
