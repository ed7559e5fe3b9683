// Which RDMA devices and ports the ib wire uses: SZ_IB_HCA in NCCL_IB_HCA's syntax.
//
//   mlx5_0:1,mlx5_1     devices whose name starts with mlx5_0 (port 1 only) or mlx5_1 (any port)
//   =mlx5_0,mlx5_1      exact names: mlx5_0 and mlx5_1, not mlx5_10
//   ^mlx5_2             every device except those starting with mlx5_2
//   ^=mlx5_2:1          every device and port except port 1 of mlx5_2 exactly
//
// Unset or empty: every device and every active port. Pure string logic, no verbs: unit-tested
// on every machine (tests/ib_pure_test.cc).
#pragma once

#include <string>
#include <vector>

#include "splitzip.h"

constexpr size_t kSzIbMaxHcaRules = 32;

struct szIbHcaRule {
  std::string name;
  int port;  // 1..255, or 0: every port
};

struct szIbHcaFilter {
  bool exclude = false;  // '^': the rules name what is left out
  bool exact = false;    // '=': names match whole, not as prefixes
  std::vector<szIbHcaRule> rules;  // empty: every device
};

// Parses `spec` (null or "" selects everything). Errors: szInvalidArgument with a message naming
// SZ_IB_HCA and the bad entry (an empty name, a port that is not 1..255, more than
// kSzIbMaxHcaRules entries, a name longer than 63 characters).
szResult_t szIbParseHcaFilter(const char* spec, szIbHcaFilter* filter);

// Whether port `port` of device `device` is selected by `filter`.
bool szIbHcaSelected(const szIbHcaFilter& filter, const char* device, int port);
