// Work-completion status mapping (ib_status.h).
#include "transport/ib_status.h"

szResult_t szIbWcResult(enum ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return szSuccess;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR:
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR:
    case IBV_WC_BAD_RESP_ERR:
    case IBV_WC_WR_FLUSH_ERR:  // the queue pair failed earlier: the first completion said why
      return szRemoteError;
    case IBV_WC_FATAL_ERR:
    case IBV_WC_GENERAL_ERR:
      return szSystemError;
    default:  // local length, protection, operation and binding errors: a request built wrong
      return szInternalError;
  }
}

const char* szIbWcReason(enum ibv_wc_status status) {
  switch (szIbWcResult(status)) {
    case szSuccess:
      return "success";
    case szRemoteError:
      return status == IBV_WC_WR_FLUSH_ERR ? "the queue pair had already failed"
             : status == IBV_WC_REM_ACCESS_ERR || status == IBV_WC_REM_INV_REQ_ERR
                 ? "the peer refused the write (its memory or queue pair is gone: it closed)"
                 : "the peer stopped answering (its process ended, or the link is down)";
    case szSystemError:
      return "the RDMA device failed";
    default:
      return "a work request was built wrong (a bug in SplitZip: please report it)";
  }
}
