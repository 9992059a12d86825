// SPDX-License-Identifier: MIT
// swaplab(1) and the bash completion, walked from the CLI::App after every
// subcommand is registered: the same names and descriptions --help prints.
#include "help_gen.h"

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/preset_knobs.h"
#include "swaplab_version.h"

namespace swaplab::tools {
namespace {

// What --help shows: CLI11 hides options and subcommands whose group is "".
bool Shown(const CLI::Option* o) { return !o->get_group().empty(); }
bool Shown(const CLI::App* a) { return !a->get_group().empty(); }

std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* a) { return Shown(a); });
}
std::vector<const CLI::Option*> Options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return Shown(o); });
}

// Flags have no type name; options that take a value show one ("UINT").
bool TakesValue(const CLI::Option* o) { return !o->get_type_name().empty(); }

// Roff text: backslashes and non-ASCII characters as escapes, no line
// starting with a control character.
std::string Roff(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      if (c == '\\')
        out += "\\e";
      else if (c == '-')
        out += "\\-";
      else if ((c == '.' || c == '\'') && (out.empty() || out.back() == '\n'))
        out += std::string("\\&") + static_cast<char>(c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    // One UTF-8 sequence as \[uXXXX].
    const int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    uint32_t cp = c & (0xff >> (len + 1));
    for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3f);
    out += fmt::format("\\[u{:04X}]", cp);
    i += len;
  }
  return out;
}

// "-h, --help" / "--size MIB" / "NAME" as --help writes an option.
std::string OptionSynopsis(const CLI::Option* o) {
  if (o->get_positional()) return "\\fI" + Roff(o->get_name()) + "\\fR";
  std::string s;
  for (const auto& n : o->get_snames())
    s += (s.empty() ? "" : ", ") + ("\\fB\\-" + Roff(n) + "\\fR");
  for (const auto& n : o->get_lnames())
    s += (s.empty() ? "" : ", ") + ("\\fB\\-\\-" + Roff(n) + "\\fR");
  if (TakesValue(o)) s += " \\fI" + Roff(o->get_type_name()) + "\\fR";
  return s;
}

void ManOptions(const CLI::App& app, std::string& out) {
  for (const CLI::Option* o : Options(app)) {
    out += ".TP\n" + OptionSynopsis(o) + "\n" + Roff(o->get_description()) + "\n";
  }
}

void ManCommands(const CLI::App& app, const std::string& prefix, std::string& out) {
  for (const CLI::App* sub : Subcommands(app)) {
    const std::string path = prefix + " " + sub->get_name();
    out += ".SS \"" + Roff(path) + "\"\n" + Roff(sub->get_description()) + "\n";
    ManOptions(*sub, out);
    ManCommands(*sub, path, out);
  }
}

std::string ManPage(const CLI::App& app) {
  std::string out;
  out += fmt::format(".TH SWAPLAB 1 \"\" \"swaplab {}\" \"User Commands\"\n", SWAPLAB_VERSION);
  // NAME's one line: the description after "swaplab — ".
  const std::string description = app.get_description();
  std::string_view what = description;
  if (const size_t dash = what.find("\u2014 "); dash != std::string_view::npos)
    what.remove_prefix(dash + std::string_view("\u2014 ").size());
  out += ".SH NAME\nswaplab \\- " + Roff(what) + "\n";
  out +=
      ".SH SYNOPSIS\n.B swaplab\n[\\fIOPTIONS\\fR] [\\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR] "
      "[\\fIARGS\\fR]]\n";
  out += ".SH DESCRIPTION\n" + Roff(app.get_description()) +
         "\n.PP\nWithout a subcommand, swaplab runs \\fBreproduce\\fR on its defaults.\n"
         "Bad usage exits with status 2.\n";
  out += ".SH OPTIONS\n";
  ManOptions(app, out);
  out += ".SH COMMANDS\n";
  ManCommands(app, "swaplab", out);
  out +=
      ".SH SEE ALSO\nThe project's README.md and docs/ (docs/library.md: the allocator as a "
      "library).\n";
  return out;
}

// Every subcommand path (" area format"), with its options and children.
void CompletionCases(const CLI::App& app, const std::string& path, std::string& paths,
                     std::string& cases) {
  std::string words;
  for (const CLI::App* sub : Subcommands(app)) words += sub->get_name() + " ";
  for (const CLI::Option* o : Options(app)) {
    for (const auto& n : o->get_snames()) words += "-" + n + " ";
    for (const auto& n : o->get_lnames()) words += "--" + n + " ";
  }
  if (!words.empty()) words.pop_back();
  cases += fmt::format("    \"{}\") words=\"{}\" ;;\n", path, words);
  for (const CLI::App* sub : Subcommands(app)) {
    const std::string p = path + " " + sub->get_name();
    paths += fmt::format("      \"{}\") path=\"{}\" ;;\n", p, p);
    CompletionCases(*sub, p, paths, cases);
  }
}

std::string Completion(const CLI::App& app) {
  std::string paths, cases;
  CompletionCases(app, "", paths, cases);
  std::string presets;
  for (const auto& p : alloc::Policy::PresetNames()) presets += (presets.empty() ? "" : " ") + p;
  std::string knobs;
  for (const auto& k : alloc::Policy::Knobs())
    knobs += (knobs.empty() ? "" : " ") + std::string(k.name) + "=";
  return fmt::format(
      "# bash completion for swaplab {}; generated by `swaplab --completion-bash`.\n"
      "_swaplab() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}\n"
      "  local path=\"\" words i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"$path ${{COMP_WORDS[i]}}\" in\n"
      "{}"
      "    esac\n"
      "  done\n"
      "  case \"$prev\" in\n"
      "    --policy) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n"
      "    --knob) compopt -o nospace; COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n"
      "  esac\n"
      "  case \"$path\" in\n"
      "{}"
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}}\n"
      "complete -o default -F _swaplab swaplab\n",
      SWAPLAB_VERSION, paths, presets, knobs, cases);
}

// README's preset table: a row per Policy::Presets() entry.
std::string PresetsMarkdown() {
  std::string out =
      "| preset | stands for | built as | what it bundles | read from |\n|---|---|---|---|---|\n";
  for (const alloc::PresetInfo& p : alloc::Policy::Presets()) {
    std::string built = p.base.empty() ? "the knobs' defaults" : fmt::format("`{}`", p.base);
    for (std::string_view knob : alloc::PresetKnobAssignments(p))
      built += fmt::format(" `{}`", knob);
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", p.name, p.kernels, built, p.summary,
                       p.source);
  }
  return out;
}

}  // namespace

void AddHelpOutputs(CLI::App& app, HelpOutputs& o) {
  app.set_version_flag("--version", std::string("swaplab ") + SWAPLAB_VERSION_STRING,
                       "print the version (and the git commit it was built from) and exit");
  app.add_flag("--help-man", o.man, "swaplab(1) in roff on stdout")->group("");
  app.add_flag("--completion-bash", o.completion, "the bash completion script on stdout")
      ->group("");
  app.add_flag("--presets-markdown", o.presets, "README's policy preset table on stdout")
      ->group("");
}

bool RunHelpOutputs(const CLI::App& app, const HelpOutputs& o) {
  if (o.man) fmt::print("{}", ManPage(app));
  if (o.completion) fmt::print("{}", Completion(app));
  if (o.presets) fmt::print("{}", PresetsMarkdown());
  return o.man || o.completion || o.presets;
}

}  // namespace swaplab::tools
