// Which GID of a port the ib wire addresses its peers by. InfiniBand routes by LID within a
// subnet and uses GID index 0; RoCE needs a GID, and as NCCL does by default the wire picks a
// RoCE v2 GID (routable over UDP/IP), IPv4-mapped first, then a global IPv6 one. SZ_IB_GID_INDEX
// names one instead. Pure logic over a port's GID table (read by ib_devices.cc from sysfs),
// unit-tested on the CPU (tests/ib_pure_test.cc).
#pragma once

#include <cstdint>
#include <vector>

enum szIbGidType { kSzIbGidNone = 0, kSzIbGidIbOrRoceV1 = 1, kSzIbGidRoceV2 = 2 };

struct szIbGidEntry {
  uint8_t raw[16];
  szIbGidType type;  // kSzIbGidNone: an empty entry
};

// The GID index to use on a port: `wanted` if >= 0 (and then it must name a non-empty entry of
// `table` on RoCE), else the default above. -1 if the port has none usable.
int szIbPickGidIndex(const std::vector<szIbGidEntry>& table, bool roce, int wanted);
