// Failed szResult_t calls as C++ exceptions, translated into splitzip.errors.SplitZipError
// (its subclass for the code) carrying the code and szGetLastError's message.
#pragma once

#include <nanobind/nanobind.h>
#include <splitzip.h>

#include <stdexcept>
#include <string>

namespace szpy {

struct Error : std::runtime_error {
  Error(szResult_t code, const std::string& message) : std::runtime_error(message), code(code) {}
  szResult_t code;
};

// Throws the error of `code` with the last message: the communicator's when `comm` is given
// (its asynchronous error, else this thread's), this thread's otherwise. Call it on the thread
// that made the failing call: the message is thread-local.
[[noreturn]] void raise(szResult_t code, szComm_t comm = nullptr);

inline void check(szResult_t code, szComm_t comm = nullptr) {
  if (code != szSuccess) raise(code, comm);
}

// Turns szpy::Error into the splitzip.errors class of its code.
void registerErrorTranslator();

}  // namespace szpy
