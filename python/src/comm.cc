// Communicator bindings: init, send/recv (single and vectored), groups, errors, stats, abort.
// Every call that can wait on a peer releases the GIL, so other Python threads (and the
// progress of a peer rank in the same process) go on.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <splitzip.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codebook.h"
#include "errors.h"

namespace nb = nanobind;

namespace szpy {
namespace {

cudaStream_t stream(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }

// szStats_t as a dict. One row per field: when the struct grows, add its rows here.
struct StatsField {
  const char* name;
  uint64_t szStats_t::*counter;
  double szStats_t::*seconds;  // or another double (escapeRate)
};
constexpr StatsField kStatsFields[] = {
    {"raw_bytes", &szStats_t::rawBytes, nullptr},
    {"wire_bytes", &szStats_t::wireBytes, nullptr},
    {"escapes", &szStats_t::escapes, nullptr},
    {"slices", &szStats_t::slices, nullptr},
    {"compressed_slices", &szStats_t::compressedSlices, nullptr},
    {"recalibrations", &szStats_t::recalibrations, nullptr},
    {"recv_raw_bytes", &szStats_t::recvRawBytes, nullptr},
    {"recv_wire_bytes", &szStats_t::recvWireBytes, nullptr},
    {"recv_slices", &szStats_t::recvSlices, nullptr},
    {"escape_rate", nullptr, &szStats_t::escapeRate},
    {"encode_seconds", nullptr, &szStats_t::encodeSeconds},
    {"wire_seconds", nullptr, &szStats_t::wireSeconds},
    {"decode_seconds", nullptr, &szStats_t::decodeSeconds},
};

class Comm {
 public:
  Comm(int nranks, const nb::bytes& uniqueId, int rank, const std::optional<std::string>& wire, int codec,
       const std::optional<nb::bytes>& codebook, size_t sliceBytes, int pipelineDepth, bool blocking,
       int timeoutMs, int crc) {
    if (uniqueId.size() != SZ_UNIQUE_ID_BYTES)
      throw Error(szInvalidArgument, "a unique id is " + std::to_string(SZ_UNIQUE_ID_BYTES) + " bytes");
    szUniqueId id;
    std::memcpy(id.internal, uniqueId.data(), SZ_UNIQUE_ID_BYTES);
    szConfig_t config = SZ_CONFIG_INITIALIZER;
    // The library copies the configuration (strings and codebook included) before returning.
    config.wire = wire ? wire->c_str() : nullptr;
    config.codec = codec;
    szCodebook_t storage;
    config.codebook = unpackOptional(codebook, &storage);
    config.sliceBytes = sliceBytes;
    config.pipelineDepth = pipelineDepth;
    config.blocking = blocking ? 1 : 0;
    config.timeoutMs = timeoutMs;
    config.crc = crc;
    szResult_t r;
    {
      nb::gil_scoped_release release;
      r = szCommInitRankConfig(&comm_, nranks, id, rank, &config);
    }
    if (r == szInProgress && !blocking) return;
    if (r != szSuccess) {
      if (comm_ == nullptr) raise(r);
      Error e(r, szGetLastError(comm_));
      release(true);
      throw e;
    }
  }
  ~Comm() { release(true); }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  szComm_t get() const {
    if (comm_ == nullptr) throw Error(szInvalidUsage, "the communicator was closed or aborted");
    return comm_;
  }

  // A call in flight: the GIL is released inside it, so another thread (a watchdog's abort, a
  // close) may reach release() meanwhile; release() frees the communicator only once every call
  // in flight has returned (each ends by the communicator's timeout at most), never under one.
  class Flight {
   public:
    explicit Flight(Comm* owner) : owner_(owner), comm_(owner->get()) {
      std::lock_guard<std::mutex> lock(owner_->mu_);
      ++owner_->inFlight_;
    }
    ~Flight() {
      std::lock_guard<std::mutex> lock(owner_->mu_);
      if (--owner_->inFlight_ == 0) owner_->idle_.notify_all();
    }
    Flight(const Flight&) = delete;
    Flight& operator=(const Flight&) = delete;
    szComm_t comm() const { return comm_; }

   private:
    Comm* owner_;
    szComm_t comm_;
  };

  void send(uintptr_t buff, size_t count, int type, int peer, uintptr_t s) {
    Flight flight(this);
    szComm_t c = flight.comm();
    szResult_t r;
    {
      nb::gil_scoped_release release;
      r = szSend(reinterpret_cast<const void*>(buff), count, szDataType_t(type), peer, c, stream(s));
    }
    check(r, c);
  }
  void recv(uintptr_t buff, size_t count, int type, int peer, uintptr_t s) {
    Flight flight(this);
    szComm_t c = flight.comm();
    szResult_t r;
    {
      nb::gil_scoped_release release;
      r = szRecv(reinterpret_cast<void*>(buff), count, szDataType_t(type), peer, c, stream(s));
    }
    check(r, c);
  }
  void sendv(const std::vector<uintptr_t>& buffs, const std::vector<size_t>& counts, int type, int peer,
             uintptr_t s) {
    Flight flight(this);
    szComm_t c = flight.comm();
    std::vector<const void*> ptrs = pointers<const void*>(buffs, counts);
    szResult_t r;
    {
      nb::gil_scoped_release release;
      r = szSendv(ptrs.data(), counts.data(), int(ptrs.size()), szDataType_t(type), peer, c, stream(s));
    }
    check(r, c);
  }
  void recvv(const std::vector<uintptr_t>& buffs, const std::vector<size_t>& counts, int type, int peer,
             uintptr_t s) {
    Flight flight(this);
    szComm_t c = flight.comm();
    std::vector<void*> ptrs = pointers<void*>(buffs, counts);
    szResult_t r;
    {
      nb::gil_scoped_release release;
      r = szRecvv(ptrs.data(), counts.data(), int(ptrs.size()), szDataType_t(type), peer, c, stream(s));
    }
    check(r, c);
  }

  // (code, message): szCommGetAsyncError and, when it is an error, its message.
  nb::tuple asyncError() {
    szComm_t c = get();
    szResult_t e = szSuccess;
    check(szCommGetAsyncError(c, &e), c);
    return nb::make_tuple(int(e), e == szSuccess || e == szInProgress ? std::string() : std::string(szGetLastError(c)));
  }

  nb::dict stats() {
    szComm_t c = get();
    szStats_t s;
    check(szCommGetStats(c, &s), c);
    nb::dict d;
    for (const StatsField& f : kStatsFields) {
      if (f.counter) d[f.name] = s.*f.counter;
      else d[f.name] = s.*f.seconds;
    }
    return d;
  }

  int rank() {
    int r = 0;
    check(szCommUserRank(get(), &r));
    return r;
  }
  int nranks() {
    int n = 0;
    check(szCommCount(get(), &n));
    return n;
  }

  // Finalize (waits for device operations), then destroy; the finalize's error is raised after
  // the communicator is freed.
  void close() {
    szResult_t r;
    std::string message;
    {
      Flight flight(this);
      szComm_t c = flight.comm();
      {
        nb::gil_scoped_release release;
        r = szCommFinalize(c);
      }
      message = r == szSuccess ? "" : szGetLastError(c);
    }
    release(r != szSuccess);
    if (r != szSuccess) throw Error(r, message);
  }
  void abort() { release(true); }
  bool closed() const { return comm_ == nullptr; }

 private:
  template <typename P>
  static std::vector<P> pointers(const std::vector<uintptr_t>& buffs, const std::vector<size_t>& counts) {
    if (buffs.size() != counts.size()) throw Error(szInvalidArgument, "one count per buffer");
    std::vector<P> ptrs;
    ptrs.reserve(buffs.size());
    for (uintptr_t b : buffs) ptrs.push_back(reinterpret_cast<P>(b));
    return ptrs;
  }

  void release(bool abort) {
    if (comm_ == nullptr) return;
    szComm_t c = comm_;
    comm_ = nullptr;  // later calls raise; calls in flight keep theirs until they return
    nb::gil_scoped_release release;
    {
      std::unique_lock<std::mutex> lock(mu_);
      idle_.wait(lock, [this] { return inFlight_ == 0; });
    }
    if (abort) szCommAbort(c);
    else szCommDestroy(c);
  }

  szComm_t comm_ = nullptr;
  std::mutex mu_;
  std::condition_variable idle_;
  int inFlight_ = 0;
};

}  // namespace

void bindComm(nb::module_& m) {
  m.def("get_unique_id", [] {
    szUniqueId id;
    check(szGetUniqueId(&id));
    return nb::bytes(id.internal, SZ_UNIQUE_ID_BYTES);
  }, "szGetUniqueId: 128 bytes to hand to every rank.");
  m.def("group_start", [] { check(szGroupStart()); });
  m.def("group_end", [] {
    szResult_t r;
    {
      nb::gil_scoped_release release;
      r = szGroupEnd();
    }
    check(r);
  }, "szGroupEnd: returns once host operations are complete and device ones enqueued.");

  nb::class_<Comm>(m, "Comm", "szComm_t. Buffers are addresses; streams are cudaStream_t handles (0 for host).")
      .def(nb::init<int, const nb::bytes&, int, const std::optional<std::string>&, int,
                    const std::optional<nb::bytes>&, size_t, int, bool, int, int>(),
           nb::arg("nranks"), nb::arg("unique_id"), nb::arg("rank"), nb::arg("wire").none(), nb::arg("codec"),
           nb::arg("codebook").none(), nb::arg("slice_bytes"), nb::arg("pipeline_depth"), nb::arg("blocking"),
           nb::arg("timeout_ms"), nb::arg("crc"), "szCommInitRankConfig.")
      .def("send", &Comm::send, nb::arg("buff"), nb::arg("count"), nb::arg("type"), nb::arg("peer"),
           nb::arg("stream"))
      .def("recv", &Comm::recv, nb::arg("buff"), nb::arg("count"), nb::arg("type"), nb::arg("peer"),
           nb::arg("stream"))
      .def("sendv", &Comm::sendv, nb::arg("buffs"), nb::arg("counts"), nb::arg("type"), nb::arg("peer"),
           nb::arg("stream"))
      .def("recvv", &Comm::recvv, nb::arg("buffs"), nb::arg("counts"), nb::arg("type"), nb::arg("peer"),
           nb::arg("stream"))
      .def("async_error", &Comm::asyncError)
      .def("stats", &Comm::stats)
      .def("rank", &Comm::rank)
      .def("nranks", &Comm::nranks)
      .def("close", &Comm::close)
      .def("abort", &Comm::abort)
      .def_prop_ro("closed", &Comm::closed);
}

}  // namespace szpy
