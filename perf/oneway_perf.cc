// The disaggregated-serving pattern, one way: each even rank sends to the next (odd) rank, which
// receives; an odd last rank idles. Prefill workers only send and decode workers only receive,
// which sendrecv (every rank both) does not show: on one GPU shared by two ranks, one transfer
// takes one encode and one decode where sendrecv's two take two of each. Not in nccl-tests; its
// flags and output format are sendrecv_perf's. busbw = algbw: every byte crosses one link once.
#include "common/perf_common.h"

namespace {

int role(int rank, int nranks) {
  if (rank % 2 == 1) return szperf::kReceives;
  return rank + 1 < nranks ? szperf::kSends : 0;
}

szResult_t oneway(const szperf::RankInfo& r, szComm_t comm, const void* sendbuff, void* recvbuff, size_t count,
                  szDataType_t type) {
  const int what = role(r.rank, r.nranks);
  if (what & szperf::kSends) return szSend(sendbuff, count, type, r.rank + 1, comm, r.stream);
  if (what & szperf::kReceives) return szRecv(recvbuff, count, type, r.rank - 1, comm, r.stream);
  return szSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  return szperf::perfMain(argc, argv, {"oneway", oneway, [](int) { return 1.0; }, role});
}
