// The table of wires built into this library.
#include <cstring>

#include "slot_wire.h"
#include "transport.h"

const szWire* szFindWire(const char* name) {
  static const szWire* const kWires[] = {
      &szWireTcp,
#if SZ_HAVE_CUDA
      &szWireNccl,
#endif
  };
  for (const szWire* w : kWires)
    if (name != nullptr && strcmp(w->name, name) == 0) return w;
  return nullptr;
}

const szSlotWire* szFindSlotWire(const char* name) {
#if SZ_HAVE_CUDA
  if (name != nullptr && strcmp(name, szSlotWireIpc.name) == 0) return &szSlotWireIpc;
#else
  (void)name;
#endif
  return nullptr;
}
