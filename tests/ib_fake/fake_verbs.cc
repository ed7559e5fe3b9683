// A fake libibverbs.so.1 for the ib wire's CPU tests: an RDMA NIC emulated inside one process, so
// that ranks run as threads of it. Each queue pair finds its peer by QP number, RDMA writes are
// memcpy into the memory region the rkey names (bounds and access checked), a write with an
// immediate consumes a posted receive of the peer and completes it with the immediate, and every
// send completes at once (signalled ones on the sender's completion queue). A write towards a
// queue pair that is not connected (below RTR) or gone, or with a bad key, completes with
// IBV_WC_RETRY_EXC_ERR / IBV_WC_REM_ACCESS_ERR as a real NIC reports it; a write with an
// immediate and no posted receive, with IBV_WC_RNR_RETRY_EXC_ERR.
//
// FAKE_IB_PORT_STATE=down reports the port down; FAKE_IB_FLIP=N flips one payload bit of the N-th
// slot write (an attacker on the wire). Only what the ib wire calls is implemented.
#include <infiniband/verbs.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

namespace {

std::mutex gMu;  // every object below; a fake NIC has no need to be fast
uint32_t gNextQpn = 0x100, gNextKey = 0x1000;
uint64_t gImmWrites = 0, gImmBytes = 0;  // writes with an immediate that landed (slots), their bytes

struct FakeCq {
  ibv_cq cq;
  std::deque<ibv_wc> wcs;
};
struct FakeQp {
  ibv_qp qp;
  uint32_t destQpn = 0;
  std::deque<uint64_t> recvs;  // posted receives' wr_ids
};
std::map<uint32_t, FakeQp*> gQps;   // by qp_num
std::map<uint32_t, ibv_mr*> gMrs;   // by rkey (= lkey)
std::map<uint32_t, int> gAccess;    // by rkey

void push(ibv_cq* cq, const ibv_wc& wc) { reinterpret_cast<FakeCq*>(cq)->wcs.push_back(wc); }

bool inRegion(uint32_t key, uint64_t addr, uint64_t len, int need) {
  auto it = gMrs.find(key);
  if (it == gMrs.end()) return false;
  const uint64_t base = uint64_t(it->second->addr);
  return addr >= base && addr + len <= base + it->second->length && (gAccess[key] & need) == need;
}

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  std::lock_guard<std::mutex> lock(gMu);
  FakeQp* self = reinterpret_cast<FakeQp*>(qp);
  for (; wr != nullptr; wr = wr->next) {
    if ((wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM) || wr->num_sge > 1 ||
        qp->state != IBV_QPS_RTS) {
      *bad = wr;
      return EINVAL;
    }
    ibv_wc done{};
    done.wr_id = wr->wr_id;
    done.opcode = IBV_WC_RDMA_WRITE;
    done.qp_num = qp->qp_num;
    done.status = IBV_WC_SUCCESS;
    auto peer = gQps.find(self->destQpn);
    const uint64_t len = wr->num_sge ? wr->sg_list[0].length : 0;
    if (peer == gQps.end() || peer->second->qp.state < IBV_QPS_RTR || peer->second->destQpn != qp->qp_num) {
      done.status = IBV_WC_RETRY_EXC_ERR;
    } else if (len > 0 && ((!(wr->send_flags & IBV_SEND_INLINE) &&
                            !inRegion(wr->sg_list[0].lkey, wr->sg_list[0].addr, len, 0)) ||
                           !inRegion(wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len, IBV_ACCESS_REMOTE_WRITE))) {
      done.status = IBV_WC_REM_ACCESS_ERR;
    } else if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM && peer->second->recvs.empty()) {
      done.status = IBV_WC_RNR_RETRY_EXC_ERR;
    } else {
      if (len > 0) memcpy(reinterpret_cast<void*>(wr->wr.rdma.remote_addr), reinterpret_cast<void*>(wr->sg_list[0].addr), len);
      if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        static const char* flip = getenv("FAKE_IB_FLIP");
        if (flip && gImmWrites + 1 == strtoull(flip, nullptr, 10) && len > 200)
          reinterpret_cast<uint8_t*>(wr->wr.rdma.remote_addr)[200] ^= 0x10;  // past the 128-byte slot header
        ++gImmWrites;
        gImmBytes += len;
        FakeQp* p = peer->second;
        ibv_wc landed{};
        landed.wr_id = p->recvs.front();
        p->recvs.pop_front();
        landed.status = IBV_WC_SUCCESS;
        landed.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
        landed.byte_len = uint32_t(len);
        landed.imm_data = wr->imm_data;
        landed.wc_flags = IBV_WC_WITH_IMM;
        landed.qp_num = p->qp.qp_num;
        push(p->qp.recv_cq, landed);
      }
    }
    if (done.status != IBV_WC_SUCCESS) {  // the queue pair goes to the error state, as on a NIC
      qp->state = IBV_QPS_ERR;
      push(qp->send_cq, done);
      return 0;  // posted; the failure is in the completion
    }
    if (wr->send_flags & IBV_SEND_SIGNALED) push(qp->send_cq, done);
  }
  return 0;
}

int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  std::lock_guard<std::mutex> lock(gMu);
  for (; wr != nullptr; wr = wr->next) {
    if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_ERR) {
      *bad = wr;
      return EINVAL;
    }
    reinterpret_cast<FakeQp*>(qp)->recvs.push_back(wr->wr_id);
  }
  return 0;
}

int pollCq(ibv_cq* cq, int n, ibv_wc* wc) {
  std::lock_guard<std::mutex> lock(gMu);
  FakeCq* c = reinterpret_cast<FakeCq*>(cq);
  int got = 0;
  for (; got < n && !c->wcs.empty(); ++got) {
    wc[got] = c->wcs.front();
    c->wcs.pop_front();
  }
  return got;
}

ibv_device gDevice = [] {
  ibv_device d{};
  strcpy(d.name, "fake_ib0");
  d.node_type = IBV_NODE_CA;
  d.transport_type = IBV_TRANSPORT_IB;
  return d;
}();

}  // namespace

extern "C" {

// Not a verb: how many slots (writes with an immediate) landed in this process, and their bytes,
// so that a test can tell that its bytes crossed this NIC.
void fake_ib_counters(uint64_t* writes, uint64_t* bytes) {
  std::lock_guard<std::mutex> lock(gMu);
  *writes = gImmWrites;
  *bytes = gImmBytes;
}

ibv_device** (ibv_get_device_list)(int* n) {
  ibv_device** list = static_cast<ibv_device**>(calloc(2, sizeof(ibv_device*)));
  list[0] = &gDevice;
  if (n) *n = 1;
  return list;
}

void ibv_free_device_list(ibv_device** list) { free(list); }

const char* ibv_get_device_name(ibv_device* device) { return device->name; }

ibv_context* ibv_open_device(ibv_device* device) {
  ibv_context* c = new ibv_context{};
  c->device = device;
  c->ops.post_send = postSend;
  c->ops.post_recv = postRecv;
  c->ops.poll_cq = pollCq;
  return c;
}

int ibv_close_device(ibv_context* c) {
  delete c;
  return 0;
}

int ibv_query_device(ibv_context*, ibv_device_attr* attr) {
  *attr = ibv_device_attr{};
  attr->phys_port_cnt = 1;
  attr->max_qp_wr = 32768;
  attr->max_cqe = 65536;
  return 0;
}

int (ibv_query_port)(ibv_context*, uint8_t port, _compat_ibv_port_attr* compat) {
  if (port != 1) return EINVAL;
  ibv_port_attr* attr = reinterpret_cast<ibv_port_attr*>(compat);  // the caller passes the whole struct
  *attr = ibv_port_attr{};
  const char* state = getenv("FAKE_IB_PORT_STATE");
  attr->state = state && strcmp(state, "down") == 0 ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
  attr->lid = 1;
  attr->active_mtu = IBV_MTU_4096;
  attr->gid_tbl_len = 1;
  return 0;
}

int ibv_query_gid(ibv_context*, uint8_t, int index, ibv_gid* gid) {
  if (index != 0) return EINVAL;
  *gid = ibv_gid{};
  return 0;
}

ibv_pd* ibv_alloc_pd(ibv_context* c) {
  ibv_pd* pd = new ibv_pd{};
  pd->context = c;
  return pd;
}

int ibv_dealloc_pd(ibv_pd* pd) {
  delete pd;
  return 0;
}

ibv_mr* (ibv_reg_mr)(ibv_pd* pd, void* addr, size_t length, int access) {
  std::lock_guard<std::mutex> lock(gMu);
  ibv_mr* mr = new ibv_mr{};
  mr->context = pd->context;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = length;
  mr->lkey = mr->rkey = gNextKey++;
  gMrs[mr->rkey] = mr;
  gAccess[mr->rkey] = access;
  return mr;
}

int ibv_dereg_mr(ibv_mr* mr) {
  std::lock_guard<std::mutex> lock(gMu);
  gMrs.erase(mr->rkey);
  gAccess.erase(mr->rkey);
  delete mr;
  return 0;
}

ibv_cq* ibv_create_cq(ibv_context* c, int cqe, void*, ibv_comp_channel*, int) {
  FakeCq* cq = new FakeCq{};
  cq->cq.context = c;
  cq->cq.cqe = cqe;
  return &cq->cq;
}

int ibv_destroy_cq(ibv_cq* cq) {
  std::lock_guard<std::mutex> lock(gMu);
  delete reinterpret_cast<FakeCq*>(cq);
  return 0;
}

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  std::lock_guard<std::mutex> lock(gMu);
  FakeQp* q = new FakeQp{};
  q->qp.context = pd->context;
  q->qp.pd = pd;
  q->qp.send_cq = init->send_cq;
  q->qp.recv_cq = init->recv_cq;
  q->qp.qp_num = gNextQpn++;
  q->qp.state = IBV_QPS_RESET;
  q->qp.qp_type = init->qp_type;
  gQps[q->qp.qp_num] = q;
  return &q->qp;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  std::lock_guard<std::mutex> lock(gMu);
  if (mask & IBV_QP_DEST_QPN) reinterpret_cast<FakeQp*>(qp)->destQpn = attr->dest_qp_num;
  if (mask & IBV_QP_STATE) qp->state = attr->qp_state;
  return 0;
}

int ibv_destroy_qp(ibv_qp* qp) {
  std::lock_guard<std::mutex> lock(gMu);
  gQps.erase(qp->qp_num);
  delete reinterpret_cast<FakeQp*>(qp);
  return 0;
}

const char* ibv_wc_status_str(ibv_wc_status status) { return status == IBV_WC_SUCCESS ? "success" : "fake failure"; }

}  // extern "C"
