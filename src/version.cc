// szGetVersion: the version this library was built as (the header a program compiled against
// may be another one).
#include "base/checks.h"

extern "C" szResult_t szGetVersion(int* version) {
  if (version == nullptr) return szSetError(szInvalidArgument, "szGetVersion: version is NULL");
  *version = SZ_VERSION_CODE;
  return szSuccess;
}
