// The `splitzip` subcommands. Each one registers its options and its action on the CLI11 app;
// an action reports failure by throwing CliError (cli_common.h).
#pragma once

#include <CLI/CLI.hpp>

#include "cli_common.h"
#include "splitzip.h"

namespace sztool {

void addStatsCommand(CLI::App& app);      // stats.cc
void addCalibrateCommand(CLI::App& app);  // calibrate.cc
void addCodecCommands(CLI::App& app);     // codec_commands.cc: compress, decompress
void addBenchCommand(CLI::App& app);      // bench.cc

// Adds the required --dtype option (bf16, fp32, fp8e5m2) storing into `type`.
CLI::Option* addDtypeOption(CLI::App& cmd, szDataType_t* type);

// Adds --codebook (auto, default or a codebook file; cli_common.h) storing into `choice`.
CLI::Option* addCodebookOption(CLI::App& cmd, CodebookChoice* choice);

}  // namespace sztool
