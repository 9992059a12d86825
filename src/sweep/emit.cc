// SPDX-License-Identifier: MIT
// `sweep emit`: what parallel over ssh and a Slurm job array take
// (include/swaplab/sweep/sweep.h).
#include <fmt/core.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "swaplab/alloc/printable.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {

namespace {

// `s` as one bash word.
std::string Quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A path that goes into a script: a control character (a newline ends a
// line of commands.txt, a comment or an #SBATCH line) cannot be quoted for
// every reader of the script, so it is refused.
Status ScriptSafe(const std::string& what, const std::string& s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      return Status(-EINVAL, what + " " + Printable(s) +
                                 ": a control character cannot go into a generated script; "
                                 "rename it");
  }
  return Status::Ok();
}

// `s` as one argument of an #SBATCH line: as it is when it has no
// character sbatch splits or ends at, else in double quotes with \ and "
// escaped.
std::string SbatchArg(const std::string& s) {
  if (s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@,%=") ==
      std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}

}  // namespace

Result<std::string> Emit(const std::string& given_dir, const std::string& engine,
                         const std::string& swaplab) {
  const std::string dir = Absolute(given_dir);  // the scripts run from anywhere
  auto sweep = ReadSweep(dir);
  if (!sweep.ok()) return sweep.status();
  if (Status st = ScriptSafe("DIR", dir); !st.ok()) return st;
  if (Status st = ScriptSafe("swaplab's path", swaplab); !st.ok()) return st;
  const size_t n = sweep->at("points").size();
  if (engine == "parallel") {
    // One command a line, in jobs.txt order: parallel's job k is line k.
    std::string cmds;
    for (const auto& p : sweep->at("points"))
      cmds += fmt::format("{} sweep point {} {}\n", Quoted(swaplab), Quoted(dir),
                          Quoted(p.at("id").get<std::string>()));
    const std::string path = dir + "/commands.txt";
    if (Status st = WriteAtomic(path, cmds); !st.ok()) return st;
    return path;
  }
  if (engine != "slurm")
    return Status(-EINVAL, "--engine " + Printable(engine) + ": expected parallel or slurm");
  // Task i runs line i + 1 of jobs.txt, the order parallel runs them in
  // locally; a point already done is skipped by `sweep point` itself.
  const std::string name = sweep->value("name", "sweep");
  std::string job;
  for (char c : name) job += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  const std::string script = fmt::format(
      "#!/bin/bash\n"
      "# swaplab sweep {name}: {n} points, one Slurm array task each.\n"
      "# Submit from a node that sees DIR at the same path: sbatch {script}\n"
      "# (a cluster's MaxArraySize may be below {n}: submit ranges with\n"
      "# sbatch --array=A-B {script}).\n"
      "#SBATCH --job-name=swaplab-{job}\n"
      "#SBATCH --array=0-{last}\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --output={slurm_out}\n"
      "set -euo pipefail\n"
      "SWAPLAB=${{SWAPLAB:-{swaplab}}}\n"
      "DIR={dir}\n"
      "i=${{SLURM_ARRAY_TASK_ID:?SLURM_ARRAY_TASK_ID is not set: run under sbatch}}\n"
      "case $i in ''|*[!0-9]*) echo \"bad SLURM_ARRAY_TASK_ID $i\" >&2; exit 2;; esac\n"
      "if [ \"$i\" -ge {n} ]; then echo \"task $i: the sweep has {n} points\" >&2; exit 2; fi\n"
      "id=$(sed -n \"$((i + 1))p\" \"$DIR/jobs.txt\")\n"
      "echo \"task $i: point $id (line $((i + 1)) of jobs.txt)\"\n"
      "exec \"$SWAPLAB\" sweep point \"$DIR\" \"$id\"\n",
      fmt::arg("name", Printable(name)), fmt::arg("n", n), fmt::arg("job", job),
      fmt::arg("last", n == 0 ? 0 : n - 1), fmt::arg("script", Quoted(dir + "/sweep.sbatch")),
      fmt::arg("slurm_out", SbatchArg(dir + "/slurm/%A_%a.out")),
      fmt::arg("swaplab", Quoted(swaplab)), fmt::arg("dir", Quoted(dir)));
  // Slurm does not create the directory of --output.
  if (::mkdir((dir + "/slurm").c_str(), 0755) != 0 && errno != EEXIST)
    return Status(-errno, "cannot create " + Printable(dir) + "/slurm: " + std::strerror(errno));
  const std::string path = dir + "/sweep.sbatch";
  if (Status st = WriteAtomic(path, script); !st.ok()) return st;
  return path;
}

}  // namespace swaplab::sweep
