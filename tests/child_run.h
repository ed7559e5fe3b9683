// Runs a shell command line for a test and keeps what it printed (stdout and stderr, when the
// command line sends stderr there) and its exit status, for tests that drive a program of their
// own in a child process (a preloaded interposer, a fake libibverbs on LD_LIBRARY_PATH).
#pragma once

#include <cstdio>
#include <string>

namespace sztest {

struct ChildRun {
  std::string out;
  int status = -1;  // as pclose gives it; -1: the command could not start
};

inline ChildRun runChild(const std::string& command) {
  ChildRun r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  r.status = pclose(p);
  return r;
}

}  // namespace sztest
