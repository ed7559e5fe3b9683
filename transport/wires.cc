// The table of wires built into this library.
#include <cstring>

#include "transport/wire.h"

const szWire* szFindWire(const char* name) {
  static const szWire* const kWires[] = {
      &szWireTcp,
#if SZ_HAVE_CUDA
      &szWireNccl,
      &szWireIpc,
#endif
#if SZ_HAVE_CUDA && SZ_HAVE_IBVERBS
      &szWireIb,
#endif
  };
  for (const szWire* w : kWires)
    if (name != nullptr && strcmp(w->name, name) == 0) return w;
  return nullptr;
}
