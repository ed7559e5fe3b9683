// A slot's protection (slot_seal.h).
#include "src/proto/slot_seal.h"

#include <cstring>

#include "base/auth.h"

namespace sz {
namespace {

struct SlotAad {
  uint64_t fields[6];
  uint8_t nonce[12];
  SlotAad(const SlotHeader& h, int from, int to, uint32_t channel)
      : fields{h.bytes, h.opCount, h.opSlices, uint64_t(h.opType) << 32 | h.flags, h.step, uint64_t(h.version) << 32 | h.crc} {
    const uint32_t pair = uint32_t(from) << 16 | uint32_t(to);  // ranks < 65536
    const uint64_t where = (h.step & (kSealMaxStep - 1)) | uint64_t(channel & 0xFF) << 56;
    memcpy(nonce, &pair, 4);
    memcpy(nonce + 4, &where, 8);
  }
};

}  // namespace

void sealSlot(const uint8_t* key, SlotHeader* h, uint8_t* payload, int from, int to, uint32_t channel) {
  SlotAad a(*h, from, to, channel);
  memset(h->mac, 0, kSzMacBytes);
  if (h->flags & kSlotSealed) szAuthSeal(key, a.nonce, {{a.fields, sizeof(a.fields)}}, payload, h->bytes, h->mac);
  else szAuthSeal(key, a.nonce, {{a.fields, sizeof(a.fields)}, {payload, size_t(h->bytes)}}, nullptr, 0, h->mac);
}

bool openSlot(const uint8_t* key, const SlotHeader& h, uint8_t* payload, int from, int to, uint32_t channel) {
  if (h.step >= kSealMaxStep) return false;  // no sender seals such a step
  SlotAad a(h, from, to, channel);
  if (h.flags & kSlotSealed) return szAuthOpen(key, a.nonce, {{a.fields, sizeof(a.fields)}}, payload, h.bytes, h.mac);
  return szAuthOpen(key, a.nonce, {{a.fields, sizeof(a.fields)}, {payload, size_t(h.bytes)}}, nullptr, 0, h.mac);
}

}  // namespace sz
