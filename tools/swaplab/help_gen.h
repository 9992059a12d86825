// SPDX-License-Identifier: MIT
// --version, and swaplab(1) and the bash completion written from the
// subcommands and options the command line registers, so neither can miss
// one that --help lists.
#pragma once

#include <CLI/CLI.hpp>

namespace swaplab::tools {

struct HelpOutputs {
  bool man = false;         // --help-man: roff on stdout
  bool completion = false;  // --completion-bash: a bash completion script
  bool presets = false;     // --presets-markdown: README's preset table
};

// --version (shown by --help) and the hidden --help-man and
// --completion-bash (the build runs them) and --presets-markdown (the
// preset table of README.md, made from Policy::Presets(); the
// docs_presets test compares them, scripts/update-preset-docs writes it).
void AddHelpOutputs(CLI::App& app, HelpOutputs& o);
// Prints what `o` asks for from `app`'s definition; false if nothing.
bool RunHelpOutputs(const CLI::App& app, const HelpOutputs& o);

}  // namespace swaplab::tools
