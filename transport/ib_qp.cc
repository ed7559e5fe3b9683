// Queue pair set-up (ib_qp.h).
#include "transport/ib_qp.h"

#include <cerrno>
#include <cstring>

#include "base/auth.h"
#include "base/checks.h"
#include "base/param.h"

namespace {

constexpr uint32_t kInlineBytes = 16;  // credits and error words travel inline

szResult_t modify(const szIbVerbs* v, const szIbPort& port, ibv_qp* qp, ibv_qp_attr* attr, int mask,
                  const char* state) {
  const int rc = v->modifyQp(qp, attr, mask);
  if (rc != 0)
    return szSetError(szSystemError, "ib wire: %s: queue pair to %s failed: %s", port.name.c_str(), state, strerror(rc));
  return szSuccess;
}

}  // namespace

szResult_t szIbCreateQp(const szIbVerbs* v, const szIbPort& port, uint32_t sendDepth, uint32_t recvDepth, szIbQp* q) {
  if (sendDepth > port.maxQpWr || recvDepth > port.maxQpWr || sendDepth + recvDepth > port.maxCqe)
    return szSetError(szInvalidUsage, "ib wire: %s allows %u work requests per queue and %u completions per queue; "
                      "%u slots need %u and %u (lower SZ_SLOT_COUNT, or SZ_PIPELINE_DEPTH for host buffers)", port.name.c_str(), port.maxQpWr, port.maxCqe,
                      recvDepth, sendDepth, sendDepth + recvDepth);
  q->cq = v->createCq(port.context, int(sendDepth + recvDepth), nullptr, nullptr, 0);
  if (q->cq == nullptr) return szSetError(szSystemError, "ib wire: %s: ibv_create_cq failed", port.name.c_str());
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = q->cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = sendDepth;
  init.cap.max_recv_wr = recvDepth;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = kInlineBytes;
  q->qp = v->createQp(port.pd, &init);
  if (q->qp == nullptr)
    return szSetError(szSystemError, "ib wire: %s: ibv_create_qp failed: %s", port.name.c_str(), strerror(errno));
  q->sendDepth = sendDepth;
  q->recvDepth = recvDepth;
  q->maxInline = init.cap.max_inline_data;
  if (q->maxInline < kInlineBytes)
    return szSetError(szInvalidUsage, "ib wire: %s sends %u bytes inline, the wire needs %u", port.name.c_str(),
                      q->maxInline, kInlineBytes);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = uint8_t(port.port);
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  SZCHECK(modify(v, port, q->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT"));
  q->local = szIbQpInfo{};
  q->local.qpn = q->qp->qp_num;
  SZCHECK(szAuthRandom(&q->local.psn, sizeof(q->local.psn)));
  q->local.psn &= 0xffffff;
  memcpy(q->local.gid, port.gid.raw, 16);
  q->local.lid = port.lid;
  q->local.roce = port.roce;
  q->local.mtu = uint8_t(port.mtu);
  return szSuccess;
}

szResult_t szIbConnectQp(const szIbVerbs* v, const szIbPort& port, const szIbQpInfo& remote, szIbQp* q) {
  if (remote.roce != q->local.roce)
    return szSetError(szInvalidUsage, "ib wire: %s is %s, its peer's port %s", port.name.c_str(),
                      q->local.roce ? "RoCE" : "InfiniBand", remote.roce ? "RoCE" : "InfiniBand");
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(remote.mtu < q->local.mtu ? remote.mtu : q->local.mtu);
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = uint8_t(port.port);
  if (q->local.roce) {
    attr.ah_attr.is_global = 1;
    memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, 16);
    attr.ah_attr.grh.sgid_index = uint8_t(port.gidIndex);
    attr.ah_attr.grh.hop_limit = 255;
  } else {
    attr.ah_attr.dlid = remote.lid;
  }
  SZCHECK(modify(v, port, q->qp, &attr,
                 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                 "RTR"));
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = uint8_t(szParamIbTimeout());  // 1..31 and 0..7, checked by the wire's connect
  attr.retry_cnt = uint8_t(szParamIbRetryCnt());
  attr.rnr_retry = 6;  // finite: receives are reposted at once, so RNR means a peer that stopped
  attr.sq_psn = q->local.psn;
  attr.max_rd_atomic = 1;
  return modify(v, port, q->qp, &attr,
                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                    IBV_QP_MAX_QP_RD_ATOMIC,
                "RTS");
}

void szIbDestroyQp(const szIbVerbs* v, szIbQp* q) {
  if (q->qp) v->destroyQp(q->qp);
  if (q->cq) v->destroyCq(q->cq);
  *q = szIbQp{};
}
