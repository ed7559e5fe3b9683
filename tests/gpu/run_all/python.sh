# run_all.sh's Python steps: the package built against this GPU and its pytest suite.

py_build() {  # the Python package against this GPU, built here (the machine's Python and torch)
  # The image's CXX (/opt/gcc/bin/g++) has no shared libstdc++: the extension would carry its own
  # C++ runtime beside torch's and crash (README, "Python"). The system compiler is Python's.
  local cxx=${CXX:-g++}
  [ -x /usr/bin/g++ ] && cxx=/usr/bin/g++
  local cuda=SPLITZIP_CUDA=1
  case "$QUICK" in --defaults|--python) cuda= ;; esac  # as the README: CUDA found by the build itself
  STEP_TIMEOUT=400 step py_build env CXX=$cxx $cuda SPLITZIP_JOBS=16 ${DEPS:+DEPS=$DEPS LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu} \
    python3 -m pip install --no-build-isolation --no-deps ./python
}

py_suite() {
  # The Python package against this GPU (built here: the machine's Python and torch), its pytest
  # suite with Python's fault handler and glibc's heap checks (a crash names its frame).
  py_build &&
    STEP_TIMEOUT=200 step py_tests env ${DEPS:+LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu} MALLOC_CHECK_=3 \
      LD_PRELOAD="$(ls /lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null)" \
      python3 -X faulthandler -m pytest -v -p no:cacheprovider python/tests ||
    STEP_TIMEOUT=200 step py_gdb cuda-gdb -batch -ex run -ex "bt 30" -ex "info sharedlibrary" --args \
      python3 -m pytest -x -q -p no:cacheprovider python/tests
  handoff_steps
}
