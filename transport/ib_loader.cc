// libibverbs through dlopen (ib_loader.h).
#include "transport/ib_loader.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "base/checks.h"

szResult_t szIbLoadVerbs(const char* library, szIbVerbs* verbs) {
  *verbs = szIbVerbs{};
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return szSetError(szSystemError, "ib wire: cannot load %s (rdma-core's libibverbs: apt-get install libibverbs1 "
                      "ibverbs-providers): %s", library, why ? why : "unknown reason");
  }
  const char* missing = nullptr;
#define SZ_IB_VERB_LOAD(field, symbol)                                       \
  verbs->field = reinterpret_cast<decltype(&symbol)>(dlsym(handle, #symbol)); \
  if (verbs->field == nullptr && missing == nullptr) missing = #symbol;
  SZ_IB_VERBS(SZ_IB_VERB_LOAD)
#undef SZ_IB_VERB_LOAD
  verbs->queryPort = reinterpret_cast<decltype(verbs->queryPort)>(dlsym(handle, "ibv_query_port"));
  if (verbs->queryPort == nullptr && missing == nullptr) missing = "ibv_query_port";
  if (missing != nullptr) {
    dlclose(handle);
    *verbs = szIbVerbs{};
    return szSetError(szSystemError, "ib wire: %s has no %s (rdma-core too old?)", library, missing);
  }
  verbs->regDmabufMr = reinterpret_cast<decltype(&ibv_reg_dmabuf_mr)>(dlsym(handle, "ibv_reg_dmabuf_mr"));
  return szSuccess;
}

szResult_t szIbVerbsGet(const szIbVerbs** verbs) {
  static std::once_flag once;
  static szIbVerbs table;
  static szResult_t result = szSuccess;
  static std::string message;
  std::call_once(once, [] {
    result = szIbLoadVerbs("libibverbs.so.1", &table);
    if (result != szSuccess) message = szThreadLastError();
  });
  if (result != szSuccess) return szSetError(result, "%s", message.c_str());
  *verbs = &table;
  return szSuccess;
}
