// `splitzip`: the command-line tool. Parses the subcommand and turns every failure into one
// `splitzip: error: ...` line on stderr and a non-zero exit status.
#include <fmt/format.h>

#include <new>

#include "cli_common.h"
#include "commands.h"

namespace sztool {

CLI::Option* addDtypeOption(CLI::App& cmd, szDataType_t* type) {
  std::vector<std::string> names;
  for (const auto& entry : dtypeNames()) names.push_back(entry.first);
  return cmd
      .add_option_function<std::string>(
          "--dtype", [type](const std::string& name) { *type = dtypeNames().at(name); },
          "element type")
      ->required()
      ->check(CLI::IsMember(names));
}

}  // namespace sztool

int main(int argc, char** argv) {
  CLI::App app{"SplitZip: lossless BF16/FP32/FP8 KV-cache compression (arXiv 2605.01708)", "splitzip"};
  app.require_subcommand(1);
  sztool::addStatsCommand(app);
  sztool::addCalibrateCommand(app);
  sztool::addCodecCommands(app);
  sztool::addBenchCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "splitzip: error: {} (see splitzip --help)\n", e.what());
    return e.get_exit_code() != 0 ? e.get_exit_code() : 2;
  } catch (const sztool::CliError& e) {
    fmt::print(stderr, "splitzip: error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "splitzip: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "splitzip: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
