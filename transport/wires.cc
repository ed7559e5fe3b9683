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
  static const szSlotWire* const kSlotWires[] = {
#if SZ_HAVE_CUDA
      &szSlotWireIpc,
#endif
#if SZ_HAVE_CUDA && SZ_HAVE_IBVERBS
      &szSlotWireIb,
#endif
      nullptr,
  };
  for (const szSlotWire* const* w = kSlotWires; *w != nullptr; ++w)
    if (name != nullptr && strcmp((*w)->name, name) == 0) return *w;
  return nullptr;
}
