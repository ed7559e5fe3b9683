// nccl-tests' sendrecv: each rank sends to the next rank and receives from the previous one,
// in one group. busbw = algbw: every byte crosses one link once.
#include "common/perf_common.h"

namespace {

szResult_t sendrecv(const szperf::RankInfo& r, szComm_t comm, const void* sendbuff, void* recvbuff,
                    size_t count, szDataType_t type) {
  int next = (r.rank + 1) % r.nranks, prev = (r.rank - 1 + r.nranks) % r.nranks;
  szResult_t res = szGroupStart();
  if (res != szSuccess) return res;
  szResult_t sendRes = szSend(sendbuff, count, type, next, comm, r.stream);
  szResult_t recvRes = szRecv(recvbuff, count, type, prev, comm, r.stream);
  res = szGroupEnd();
  return sendRes != szSuccess ? sendRes : recvRes != szSuccess ? recvRes : res;
}

}  // namespace

int main(int argc, char** argv) {
  return szperf::perfMain(argc, argv, {"sendrecv", sendrecv, [](int) { return 1.0; }});
}
