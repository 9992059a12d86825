// SPDX-License-Identifier: MIT
// --policy and --knob (policy_arg.h).
#include "policy_arg.h"

namespace swaplab::tools {

std::string PresetList() {
  std::string out;
  for (const std::string& n : alloc::Policy::PresetNames()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void AddKnobOption(CLI::App* c, std::vector<std::string>* knobs) {
  std::string help = "NAME=VALUE: change one knob of the preset (repeatable); knobs:";
  for (const auto& k : alloc::Policy::Knobs()) help += " " + std::string(k.name);
  c->add_option("--knob", *knobs, help)->type_name("NAME=VALUE");
}

Status ApplyKnobs(alloc::Policy* p, const std::vector<std::string>& knobs) {
  for (const std::string& a : knobs)
    if (Status st = p->SetAssignment(a); !st.ok())
      return Status(st.code(), "--knob: " + st.message());
  if (Status st = p->Validate(); !st.ok()) return Status(st.code(), "--knob: " + st.message());
  return Status::Ok();
}

Result<alloc::Policy> PolicyFromArgs(const std::string& preset,
                                     const std::vector<std::string>& knobs) {
  auto preset_policy = alloc::Policy::Preset(preset);
  if (!preset_policy.ok()) return Status(-EINVAL, "--policy: " + preset_policy.status().message());
  alloc::Policy p = *preset_policy;
  if (Status st = ApplyKnobs(&p, knobs); !st.ok()) return st;
  return p;
}

}  // namespace swaplab::tools
