// Per-device facts the launchers size their grids with, read once per device.
#pragma once

#include "splitzip.h"

namespace sz {

// Multiprocessor count of the current device.
szResult_t currentDeviceSms(int* sms);

}  // namespace sz
