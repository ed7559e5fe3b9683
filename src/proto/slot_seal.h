// A slot's protection (SZ_AUTH_DATA, SZ_ENCRYPT; docs/PIPELINE.md, "What the wire protects"):
// AES-256-GCM under the communicator's session key. The nonce is the sending and receiving ranks,
// the slot proxy's channel and the step, unique per slot of a session, so that no slot is
// accepted from another pair, channel, step or operation, and no two slots share a nonce. The
// header's fields but `ready` are authenticated; the payload is too (SZ_AUTH_DATA: GMAC) or is
// encrypted in place (kSlotSealed). The sender seals after the CRC32C of the plaintext; the
// receiver opens first, before any other field of the header is believed. The host slots seal
// host channels' slots in their CPU threads; the slot proxy seals device slots that pass through
// host memory (the tcp wire's) as it ships them and opens them as they land.
#pragma once

#include <cstdint>

#include "kernels/slot_format.h"

namespace sz {

// Steps below 2^56: the top byte of the nonce's step field is the channel (< 256).
constexpr uint64_t kSealMaxStep = uint64_t(1) << 56;

// Writes h->mac (and encrypts `payload` in place when h->flags has kSlotSealed); h->bytes payload
// bytes. `from`, `to`: ranks < 65536; `channel` < 256; h->step < kSealMaxStep.
void sealSlot(const uint8_t* key, SlotHeader* h, uint8_t* payload, int from, int to, uint32_t channel);

// Checks h.mac (and decrypts `payload` in place when sealed); false if anything was changed.
bool openSlot(const uint8_t* key, const SlotHeader& h, uint8_t* payload, int from, int to, uint32_t channel);

}  // namespace sz
