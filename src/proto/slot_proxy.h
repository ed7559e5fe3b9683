// Slot wires over message wires, driven by a proxy thread (NCCL's net transport proxy and its
// connector FIFO): for wires the GPU cannot write into directly, each rank keeps both ends of
// every channel locally: the rings in memory the message wire moves (device memory for nccl,
// pinned host memory for tcp), the credit words, error words and slot signals (SlotSignal) in
// pinned host memory the kernels address. The sender's kernels fill local send slots and
// publish each in its signal (bytes, then ready); the proxy reads the signal and ships header
// and payload as one message, in step order. The receiving proxy posts the receives of the
// next free slots ahead, and publishes each landed slot to its kernels through their signal
// (written after the bytes). The credits the receiving kernels write are shipped back over
// tcp and written into the sender's credit words, as are the error words. The kernels and the
// host side of the protocol (src/proto/slot_path.h) are the same as for the ipc wire: only who
// moves the bytes differs.
#pragma once

#include "transport/slot_wire.h"
#include "transport/transport.h"

namespace sz {

// The slot wire "tcp": device buffers over the tcp wire (CUDA builds).
extern const szSlotWire kSlotWireTcpProxy;
// The slot wire "nccl": device buffers over the nccl wire (ncclSend/ncclRecv between device
// rings; the control messages over tcp).
extern const szSlotWire kSlotWireNcclProxy;

}  // namespace sz
