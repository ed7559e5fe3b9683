// splitzip._splitzip: a thin layer over include/splitzip.h. Buffers cross it as addresses and
// sizes; splitzip/*.py checks arrays and tensors (dtype, contiguity, device, lifetime) before
// any address gets here. Calls that can block or touch much memory release the GIL.
#include <nanobind/nanobind.h>
#include <splitzip.h>

#include "errors.h"

namespace nb = nanobind;

namespace szpy {
void bindCodec(nb::module_& m);
void bindComm(nb::module_& m);
}  // namespace szpy

NB_MODULE(_splitzip, m) {
  m.doc() = "Low-level bindings of the SplitZip C API (include/splitzip.h); use the splitzip package.";
  m.attr("VERSION_CODE") = SZ_VERSION_CODE;
  m.attr("HAVE_CUDA") = bool(SZ_PY_CUDA);
  m.attr("FRAME_HEADER_BYTES") = SZ_FRAME_HEADER_BYTES;
  m.attr("UNIQUE_ID_BYTES") = SZ_UNIQUE_ID_BYTES;
  m.attr("ENCODE_CRC") = SZ_ENCODE_CRC;
  m.attr("ENCODE_CALIBRATE") = SZ_ENCODE_CALIBRATE;
  szpy::registerErrorTranslator();
  szpy::bindCodec(m);
  szpy::bindComm(m);
}
