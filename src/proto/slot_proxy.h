// A slot wire over a message wire, driven by a proxy thread (NCCL's net transport proxy): for
// wires the GPU cannot write into directly (tcp; later any wire of transport.h), each rank keeps
// both ends of every channel in pinned host memory the kernels address. The sender's kernels
// fill local send slots; the proxy ships each published slot (header, then payload) on the
// message wire, in step order. The receiving proxy lands them in its local receive slots, then
// publishes them to its kernels (ready is written last, after the bytes); the credits the
// receiving kernels write are shipped back and written into the sender's credit words, as are
// the error words. The kernels and the host side of the protocol (src/proto/slot_path.h) are the same
// as for the ipc wire: only who moves the bytes differs.
#pragma once

#include "transport/slot_wire.h"
#include "transport/transport.h"

namespace sz {

// The slot wire "tcp": device buffers over the tcp wire (CUDA builds).
extern const szSlotWire kSlotWireTcpProxy;

}  // namespace sz
