// swaplab: the command line. One file per subcommand.
#include <CLI/CLI.hpp>

#include "demo.h"

int main(int argc, char** argv) {
  CLI::App app{"swaplab — the Linux swap slot allocator and hibernation image path, in user space"};
  app.require_subcommand(0, 1);
  swaplab::tools::DemoOptions demo;
  CLI::App* demo_cmd = swaplab::tools::AddDemo(app, demo);
  CLI11_PARSE(app, argc, argv);
  if (app.get_subcommands().empty() || demo_cmd->parsed()) return swaplab::tools::RunDemo(demo);
  return 0;
}
