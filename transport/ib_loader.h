// libibverbs, opened at run time (dlopen "libibverbs.so.1", as NCCL does) so that the library
// loads and works on machines without rdma-core: only the ib wire needs it, and only at its
// init. A table of the verbs the wire calls; the data-path verbs (ibv_post_send, ibv_post_recv,
// ibv_poll_cq) are inline in verbs.h and dispatch through the device's own ops, so they need no
// entry here. Built where rdma-core's headers are (SZ_HAVE_IBVERBS).
#pragma once

#include <infiniband/verbs.h>

#include "splitzip.h"

#define SZ_IB_VERBS(X)                                          \
  X(getDeviceList, ibv_get_device_list)                         \
  X(freeDeviceList, ibv_free_device_list)                       \
  X(getDeviceName, ibv_get_device_name)                         \
  X(openDevice, ibv_open_device)                                \
  X(closeDevice, ibv_close_device)                              \
  X(queryDevice, ibv_query_device)                              \
  X(queryGid, ibv_query_gid)                                    \
  X(allocPd, ibv_alloc_pd)                                      \
  X(deallocPd, ibv_dealloc_pd)                                  \
  X(regMr, ibv_reg_mr)                                          \
  X(deregMr, ibv_dereg_mr)                                      \
  X(createCq, ibv_create_cq)                                    \
  X(destroyCq, ibv_destroy_cq)                                  \
  X(createQp, ibv_create_qp)                                    \
  X(modifyQp, ibv_modify_qp)                                    \
  X(destroyQp, ibv_destroy_qp)                                  \
  X(wcStatusStr, ibv_wc_status_str)

struct szIbVerbs {
#define SZ_IB_VERB_FIELD(field, symbol) decltype(&symbol) field;
  SZ_IB_VERBS(SZ_IB_VERB_FIELD)
#undef SZ_IB_VERB_FIELD
  // The exported ibv_query_port fills a whole ibv_port_attr (verbs.h declares it with the
  // compatibility prefix of the struct, which its inline wrapper casts to, as here).
  int (*queryPort)(ibv_context* context, uint8_t port, ibv_port_attr* attr);
  // rdma-core 34 and later: registration of dma-buf memory (GPUDirect RDMA); null if absent.
  decltype(&ibv_reg_dmabuf_mr) regDmabufMr;
};

// Opens `library` and resolves every verb of the table. Errors: szSystemError naming the
// library and the loader's reason (not found, or a verb missing); nothing stays loaded then.
szResult_t szIbLoadVerbs(const char* library, szIbVerbs* verbs);

// The process's table of libibverbs.so.1, loaded at the first call and kept (the outcome of that
// first attempt, failure included, is every later call's). Errors: as szIbLoadVerbs.
szResult_t szIbVerbsGet(const szIbVerbs** verbs);
