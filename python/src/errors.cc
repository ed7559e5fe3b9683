// The exception translator: the Python classes live in splitzip/errors.py, so their hierarchy
// (and the builtin bases users catch, ValueError, TimeoutError, ...) is defined in one place.
#include "errors.h"

namespace nb = nanobind;

namespace szpy {

void raise(szResult_t code, szComm_t comm) {
  const char* message = szGetLastError(comm);
  throw Error(code, message && *message ? message : szGetErrorString(code));
}

void registerErrorTranslator() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      nb::object exc = nb::module_::import_("splitzip.errors").attr("from_code")(int(e.code), e.what());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });
}

}  // namespace szpy
