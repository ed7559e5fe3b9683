// GID selection (ib_gid.h).
#include "transport/ib_gid.h"

#include <cstring>

namespace {

bool empty(const szIbGidEntry& g) {
  static const uint8_t zero[16] = {0};
  return g.type == kSzIbGidNone || memcmp(g.raw, zero, 16) == 0;
}
bool ipv4Mapped(const szIbGidEntry& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g.raw, prefix, 12) == 0;
}
bool linkLocal(const szIbGidEntry& g) { return g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80; }

}  // namespace

int szIbPickGidIndex(const std::vector<szIbGidEntry>& table, bool roce, int wanted) {
  if (wanted >= 0) {
    if (!roce) return wanted;
    return size_t(wanted) < table.size() && !empty(table[size_t(wanted)]) ? wanted : -1;
  }
  if (!roce) return 0;
  for (bool (*good)(const szIbGidEntry&) : {ipv4Mapped, +[](const szIbGidEntry& g) { return !linkLocal(g); }})
    for (size_t i = 0; i < table.size(); ++i)
      if (!empty(table[i]) && table[i].type == kSzIbGidRoceV2 && good(table[i])) return int(i);
  return -1;
}
