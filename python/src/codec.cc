// Codec bindings: host encode/decode/frame info, codebooks, histograms, and the device calls
// (stream-ordered; the caller passes device addresses and a cudaStream_t as integers).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <splitzip.h>

#include <cstring>
#include <string>
#include <vector>

#include "codebook.h"
#include "codec/code_bits.h"
#include "codec/frame.h"
#include "errors.h"

namespace nb = nanobind;

namespace szpy {

nb::bytes packCodebook(const szCodebook_t& codebook) {
  char packed[kPackedCodebookBytes];
  packed[0] = char(codebook.type);
  packed[1] = char(codebook.used);
  std::memcpy(packed + 2, codebook.exponents, SZ_CODEBOOK_SIZE);
  return nb::bytes(packed, sizeof packed);
}

szCodebook_t unpackCodebook(const nb::bytes& packed) {
  if (packed.size() != kPackedCodebookBytes)
    throw Error(szInvalidArgument, "a packed codebook is 18 bytes");
  const auto* p = static_cast<const uint8_t*>(packed.data());
  szCodebook_t codebook{};
  codebook.type = szDataType_t(p[0]);
  codebook.used = p[1];
  std::memcpy(codebook.exponents, p + 2, SZ_CODEBOOK_SIZE);
  return codebook;
}

const szCodebook_t* unpackOptional(const std::optional<nb::bytes>& packed, szCodebook_t* storage) {
  if (!packed) return nullptr;
  *storage = unpackCodebook(*packed);
  return storage;
}

namespace {

const void* ptr(uintptr_t address) { return reinterpret_cast<const void*>(address); }
void* mutablePtr(uintptr_t address) { return reinterpret_cast<void*>(address); }
cudaStream_t stream(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }

// Encodes straight into a bytes object of the worst-case size, then shrinks it in place: one
// copy of the data (the encode itself), none after.
nb::bytes encode(uintptr_t in, size_t count, int type, const std::optional<nb::bytes>& codebook, int flags) {
  size_t capacity = 0;
  check(szEncodeMaxSize(count, szDataType_t(type), &capacity));
  szCodebook_t storage;
  const szCodebook_t* cb = unpackOptional(codebook, &storage);
  PyObject* out = PyBytes_FromStringAndSize(nullptr, Py_ssize_t(capacity));
  if (out == nullptr) throw nb::python_error();
  size_t bytes = 0;
  szResult_t r;
  {
    nb::gil_scoped_release release;
    r = szEncode(ptr(in), count, szDataType_t(type), cb, flags, PyBytes_AS_STRING(out), capacity, &bytes);
  }
  if (r != szSuccess) {
    Py_DECREF(out);
    raise(r);
  }
  if (_PyBytes_Resize(&out, Py_ssize_t(bytes)) != 0) throw nb::python_error();
  return nb::steal<nb::bytes>(out);
}

nb::dict infoDict(const szFrameInfo_t& info) {
  nb::dict d;
  d["type"] = int(info.type);
  d["count"] = info.count;
  d["frame_bytes"] = info.frameBytes;
  d["escapes"] = info.escapeCount;
  d["raw"] = bool(info.raw);
  d["crc"] = bool(info.crc);
  d["codebook"] = info.raw ? nb::object(nb::none()) : nb::object(packCodebook(info.codebook));
  return d;
}

nb::dict frameInfo(uintptr_t frame, size_t frameBytes) {
  szFrameInfo_t info;
  check(szFrameGetInfo(ptr(frame), frameBytes, &info));
  return infoDict(info);
}

// The header of a frame that lives in device memory, copied to the host: every header check of
// szFrameGetInfo against the `available` device bytes, without the payload (so no CRC check,
// as szDecodeAsync does not verify CRCs either).
nb::dict headerInfo(const nb::bytes& header, size_t available) {
  if (header.size() != sz::kHeaderBytes)
    throw Error(szInvalidArgument, "a frame header is " + std::to_string(sz::kHeaderBytes) + " bytes");
  sz::FrameHeader h;
  sz::readHeader(static_cast<const uint8_t*>(header.data()), &h);
  sz::FrameLayout layout;
  uint64_t frameBytes = 0;
  sz::HeaderError e = sz::checkHeader(h, available, &layout, &frameBytes);
  if (e != sz::kHeaderOk) throw Error(szCorruptFrame, sz::headerErrorString(e));
  szFrameInfo_t info{};
  info.type = szDataType_t(h.type);
  info.count = h.count;
  info.frameBytes = frameBytes;
  info.escapeCount = h.escapeCount;
  info.raw = (h.flags & sz::kFlagRaw) != 0;
  info.crc = (h.flags & sz::kFlagCrc) != 0;
  sz::codebookFromHeader(h.type, h.codebookUsed, h.codebook, layout.codeBits, &info.codebook);
  return infoDict(info);
}

nb::tuple decode(uintptr_t frame, size_t frameBytes, uintptr_t out, size_t outCapacity) {
  size_t count = 0;
  szDataType_t type = szNumTypes;
  szResult_t r;
  {
    nb::gil_scoped_release release;
    r = szDecode(ptr(frame), frameBytes, mutablePtr(out), outCapacity, &count, &type);
  }
  check(r);
  return nb::make_tuple(count, int(type));
}

// Calibration state (paper §3.3): exponent counts accumulated over any number of inputs.
struct Histogram {
  explicit Histogram(int type) { check(szHistogramInit(&h, szDataType_t(type))); }
  void accumulate(uintptr_t data, size_t count) {
    szResult_t r;
    {
      nb::gil_scoped_release release;
      r = szHistogramAccumulate(&h, ptr(data), count);
    }
    check(r);
  }
  // Counts from szHistogramAsync's device array, copied to the host by the caller.
  void add(const std::vector<unsigned long long>& counts) {
    if (counts.size() != 256) throw Error(szInvalidArgument, "a histogram has 256 counts");
    for (size_t e = 0; e < 256; ++e) h.counts[e] += counts[e];
  }
  std::vector<unsigned long long> counts() const { return {h.counts, h.counts + 256}; }
  nb::bytes codebook() const {
    szCodebook_t cb;
    check(szCodebookFromHistogram(&h, &cb));
    return packCodebook(cb);
  }
  szHistogram_t h;
};

}  // namespace

void bindCodec(nb::module_& m) {
  m.def("type_size", [](int type) { return szTypeSize(szDataType_t(type)); }, nb::arg("type"));
  m.def("type_is_compressible", [](int type) { return bool(szTypeIsCompressible(szDataType_t(type))); },
        nb::arg("type"));

  m.def("codebook_default", [](int type) {
    szCodebook_t cb;
    check(szCodebookDefault(szDataType_t(type), &cb));
    return packCodebook(cb);
  }, nb::arg("type"), "szCodebookDefault, packed.");
  m.def("codebook_validate", [](const nb::bytes& packed) {
    szCodebook_t cb = unpackCodebook(packed);
    check(szCodebookValidate(&cb));
  }, nb::arg("packed"), "szCodebookValidate: raises InvalidArgumentError saying which rule failed.");
  m.def("codebook_load", [](const std::string& path) {
    szCodebook_t cb;
    check(szCodebookLoad(path.c_str(), &cb));
    return packCodebook(cb);
  }, nb::arg("path"));
  m.def("codebook_save", [](const nb::bytes& packed, const std::string& path) {
    szCodebook_t cb = unpackCodebook(packed);
    check(szCodebookSave(&cb, path.c_str()));
  }, nb::arg("packed"), nb::arg("path"));

  nb::class_<Histogram>(m, "Histogram", "szHistogram_t: exponent counts for calibration.")
      .def(nb::init<int>(), nb::arg("type"))
      .def("accumulate", &Histogram::accumulate, nb::arg("data"), nb::arg("count"),
           "szHistogramAccumulate over `count` elements at host address `data`.")
      .def("add", &Histogram::add, nb::arg("counts"), "Adds 256 counts (a device histogram).")
      .def_prop_ro("counts", &Histogram::counts)
      .def_prop_ro("type", [](const Histogram& h) { return int(h.h.type); })
      .def("codebook", &Histogram::codebook, "szCodebookFromHistogram, packed.");

  m.def("encode_max_size", [](size_t count, int type) {
    size_t bytes = 0;
    check(szEncodeMaxSize(count, szDataType_t(type), &bytes));
    return bytes;
  }, nb::arg("count"), nb::arg("type"));
  m.def("encode", &encode, nb::arg("data"), nb::arg("count"), nb::arg("type"), nb::arg("codebook").none(),
        nb::arg("flags"), "szEncode of `count` elements at host address `data`; returns the frame.");
  m.def("frame_info", &frameInfo, nb::arg("frame"), nb::arg("frame_bytes"),
        "szFrameGetInfo of the frame at host address `frame`.");
  m.def("frame_header_info", &headerInfo, nb::arg("header"), nb::arg("available"),
        "The header checks of szFrameGetInfo on a device frame's header copied to the host.");
  m.def("decode", &decode, nb::arg("frame"), nb::arg("frame_bytes"), nb::arg("out"), nb::arg("out_capacity"),
        "szDecode into host address `out`; returns (count, type).");

  m.def("encode_temp_size", [](size_t count, int type) {
    size_t bytes = 0;
    check(szEncodeTempSize(count, szDataType_t(type), &bytes));
    return bytes;
  }, nb::arg("count"), nb::arg("type"));
  m.def("encode_async", [](uintptr_t in, size_t count, int type, const std::optional<nb::bytes>& codebook,
                           int flags, uintptr_t out, size_t outCapacity, uintptr_t outBytes, uintptr_t temp,
                           size_t tempBytes, uintptr_t s) {
    szCodebook_t storage;
    check(szEncodeAsync(ptr(in), count, szDataType_t(type), unpackOptional(codebook, &storage), flags,
                        mutablePtr(out), outCapacity, static_cast<uint64_t*>(mutablePtr(outBytes)),
                        mutablePtr(temp), tempBytes, stream(s)));
  }, nb::arg("data"), nb::arg("count"), nb::arg("type"), nb::arg("codebook").none(), nb::arg("flags"),
     nb::arg("out"), nb::arg("out_capacity"), nb::arg("out_bytes"), nb::arg("temp"), nb::arg("temp_bytes"),
     nb::arg("stream"), "szEncodeAsync on device addresses, enqueued on `stream`.");
  m.def("decode_async", [](uintptr_t frame, size_t frameBytes, uintptr_t out, size_t outCapacity, uintptr_t status,
                           uintptr_t s) {
    check(szDecodeAsync(ptr(frame), frameBytes, mutablePtr(out), outCapacity, static_cast<int*>(mutablePtr(status)),
                        stream(s)));
  }, nb::arg("frame"), nb::arg("frame_bytes"), nb::arg("out"), nb::arg("out_capacity"), nb::arg("status"),
     nb::arg("stream"), "szDecodeAsync on device addresses, enqueued on `stream`.");
  m.def("histogram_async", [](uintptr_t data, size_t count, int type, uintptr_t counts, uintptr_t s) {
    check(szHistogramAsync(ptr(data), count, szDataType_t(type),
                           static_cast<unsigned long long*>(mutablePtr(counts)), stream(s)));
  }, nb::arg("data"), nb::arg("count"), nb::arg("type"), nb::arg("counts"), nb::arg("stream"),
     "szHistogramAsync into 256 device counters, enqueued on `stream`.");
}

}  // namespace szpy
