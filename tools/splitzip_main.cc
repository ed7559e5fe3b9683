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
      ->transform(CLI::IsMember(names, CLI::ignore_case));
}

CLI::Option* addCodebookOption(CLI::App& cmd, CodebookChoice* choice) {
  return cmd.add_option("--codebook", choice->value,
                        "auto (the default): calibrated on the input, its exact top-16 (FP16, E4M3: top-8 at 3-bit codes where "
                        "that predicts the smaller frame); default: the built-in "
                        "codebook; else a codebook file");
}

}  // namespace sztool

int main(int argc, char** argv) {
  CLI::App app{"SplitZip: lossless BF16/FP32/FP8 KV-cache compression (arXiv 2605.01708)", "splitzip"};
  // --version answers alone; without it a subcommand is required (a name CLI11 does not know is
  // an error that says so, below).
  app.set_version_flag("--version", [] {
    int v = 0;
    szGetVersion(&v);
    return fmt::format("splitzip {}.{}.{} (library {}.{}.{})", SZ_MAJOR, SZ_MINOR, SZ_PATCH, v / 10000,
                       v / 100 % 100, v % 100);
  });
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
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {  // CLI11 says only "required"
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
      fmt::print(stderr, "splitzip: error: unknown subcommand '{}' (one of: {}; see splitzip --help)\n", argv[1],
                 names);
      return 2;
    }
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
