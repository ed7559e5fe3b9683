# SplitZip build. `make` builds the library, the CLI, the tests, the perf tests and the examples;
# `make test` runs the CPU tests; `make demo` runs the main job; `make install PREFIX=...
# [DESTDIR=...]`, `make uninstall`; `make clean`.
# CUDA is detected (nvcc on PATH or under CUDA_HOME); `make CUDA=0` builds without it.
# GPU_ARCH: which GPUs the kernels are compiled for.
#   native (the default): the GPUs of this machine (nvidia-smi), with PTX of the newest; on a
#          machine without a GPU, sm_90 (H100/H200) with its PTX, which later GPUs JIT-compile.
#   all:   the fat binary for packages and wheels: every architecture this nvcc knows from sm_80
#          up, with PTX of the newest (about eight times native's build time).
#   a list such as "80 90": those.
# NVCC_GENCODE, when given, replaces all of that; `make print-gencode` shows the flags.
# Flags given on the command line (make CXXFLAGS="-O1 -g") replace the defaults; the required
# ones (standard, warnings, include paths, -mavx2 / -mbmi2 / -mavx512* for the SIMD kernels) are always added.

CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null))
ifeq ($(CUDA_HOME),)
  CUDA_HOME := /usr/local/cuda
endif
CUDA ?= $(if $(wildcard $(CUDA_HOME)/bin/nvcc),1,0)
PREFIX ?= /usr/local
BUILD ?= build

CXX ?= g++
NVCC := $(CUDA_HOME)/bin/nvcc
WARN := -Wall -Wextra -Werror
override CPPFLAGS += -Iinclude -I.
CXXFLAGS ?= -O3 -g
override CXXFLAGS += -std=c++17 -fPIC -pthread $(WARN)
# Ampere (8.0, 8.6; 8.7 and 8.8 run 8.0's code), Ada (8.9), Hopper (9.0), Blackwell (10.0, 10.3,
# 11.0, 12.0; 12.1 runs 12.0's), each where this nvcc knows it.
SZ_ARCHS := 80 86 89 90 100 103 110 120
GPU_ARCH ?= native
ifeq ($(CUDA)$(origin NVCC_GENCODE),1undefined)
  NVCC_ARCHS := $(filter $(patsubst sm_%,%,$(shell $(NVCC) --list-gpu-code 2>/dev/null)),$(SZ_ARCHS))
  ifeq ($(GPU_ARCH),all)
    GENCODE_ARCHS := $(NVCC_ARCHS)
  else ifeq ($(GPU_ARCH),native)
    # The machine's GPUs by compute capability (9.0 -> 90), those this nvcc builds; else 90.
    GENCODE_ARCHS := $(sort $(filter $(NVCC_ARCHS),$(subst .,,$(shell nvidia-smi --query-gpu=compute_cap \
      --format=csv,noheader 2>/dev/null))))
    GENCODE_ARCHS := $(or $(GENCODE_ARCHS),90)
  else
    GENCODE_ARCHS := $(GPU_ARCH)
  endif
  NVCC_GENCODE := $(foreach a,$(GENCODE_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
    $(foreach a,$(lastword $(GENCODE_ARCHS)),-gencode arch=compute_$(a),code=compute_$(a))
endif
NVCCFLAGS ?= -O3 -g -lineinfo
override NVCCFLAGS += -std=c++17 $(NVCC_GENCODE) -Xcompiler -fPIC,-Wall,-Wextra,-Werror -Werror all-warnings
override LDLIBS += -lisal -lfmt -lcrypto -pthread
# DEPS=DIR: a folder where Debian packages were unpacked (dpkg -x), for machines without them.
ifneq ($(DEPS),)
  override CPPFLAGS += -I$(DEPS)/usr/include
  override LDFLAGS += -L$(DEPS)/usr/lib/x86_64-linux-gnu -Wl,-rpath,$(DEPS)/usr/lib/x86_64-linux-gnu
endif

# kernels/*.cc: the host side of GPU entry points, built without CUDA too (their launchers are
# stubbed there by kernels/launch_stubs.cc, the slot path and its graphs by src/proto/slot_path_stub.cc).
LIB_SRCS := $(wildcard src/*.cc base/*.cc src/proto/*.cc codec/*.cc transport/*.cc kernels/*.cc)
# The ib wire: the parts that need rdma-core's headers, and those that need CUDA too.
IB_VERBS_SRCS := transport/ib_loader.cc transport/ib_status.cc transport/ib_devices.cc transport/ib_qp.cc
IB_CUDA_SRCS := transport/ib_memory.cc transport/ib_proxy.cc transport/ib_wire.cc
ifeq ($(CUDA),1)
  override CPPFLAGS += -I$(CUDA_HOME)/include -DSZ_HAVE_CUDA=1
  LIB_SRCS := $(filter-out kernels/launch_stubs.cc src/proto/slot_path_stub.cc,$(LIB_SRCS))
  CU_SRCS := $(wildcard kernels/*.cu)
  override LDLIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnccl -lcudart
else
  LIB_SRCS := $(filter-out transport/nccl.cc transport/ipc.cc src/init_nccl.cc src/proto/slot_path.cc src/proto/slot_graphs.cc $(IB_CUDA_SRCS),$(LIB_SRCS))  # wires that need CUDA
  CU_SRCS :=
endif
# rdma-core's headers (Debian libibverbs-dev): the ib wire is built where they are, its pure
# parts (transport/ib_hca.cc, ib_gid.cc) everywhere. libibverbs itself is opened at run time
# (transport/ib_loader.h): the library never links it. IBVERBS=0 leaves the wire out.
# PROFILE=1: the per-operation profile (base/profile.h) compiled in; PROFILE lines at exit.
ifeq ($(PROFILE),1)
  override CPPFLAGS += -DSZ_PROFILE=1
endif
IBVERBS ?= $(if $(wildcard /usr/include/infiniband/verbs.h $(if $(DEPS),$(DEPS)/usr/include/infiniband/verbs.h)),1,0)
ifeq ($(IBVERBS),1)
  override CPPFLAGS += -DSZ_HAVE_IBVERBS=1
else
  LIB_SRCS := $(filter-out $(IB_VERBS_SRCS) $(IB_CUDA_SRCS),$(LIB_SRCS))
endif
LIB_OBJS := $(LIB_SRCS:%.cc=$(BUILD)/obj/%.o) $(CU_SRCS:%.cu=$(BUILD)/obj/%.o)
TOOL_SRCS := $(wildcard tools/*.cc)
# The interposer's pure logic (routing, group bookkeeping, handshake) builds everywhere, for the
# CPU tests; the interposer itself needs CUDA and NCCL's header (interpose/README below).
INTERPOSE_LOGIC := $(patsubst %.cc,$(BUILD)/obj/%.o,interpose/route.cc interpose/group_state.cc interpose/handshake.cc)
TEST_SRCS := $(wildcard tests/*.cc)
GPU_TEST_SRCS := $(if $(filter 1,$(CUDA)),$(wildcard tests/gpu/*.cc tests/gpu/*.cu))
PERF_SRCS := $(wildcard perf/*.cc) $(if $(filter 1,$(CUDA)),$(wildcard perf/*.cu))
PERF_COMMON := $(wildcard perf/common/*.cc)
EXAMPLE_SRCS := $(wildcard examples/*.cc)
# The readers of tensor files the CLI uses, shared with the examples and the perf tests.
TENSOR_IO := $(BUILD)/obj/tools/tensor_file.o $(BUILD)/obj/tools/safetensors_header.o $(BUILD)/obj/tools/cli_common.o
MPI_TEST_SRCS := $(wildcard tests/mpi/*.cc)
# Open MPI, when mpicxx is there: perf tests launch with mpirun (else only SZ_COMM_ID), and the
# multi-process tests are built.
MPI_CFLAGS := $(patsubst -I%,-isystem %,$(shell mpicxx --showme:compile 2>/dev/null))
MPI_LIBS := $(shell mpicxx --showme:link 2>/dev/null)
ifneq ($(MPI_LIBS),)
  MPI_DEFS := -DSZ_HAVE_MPI=1 -DOMPI_SKIP_MPICXX=1
endif

# The version is the header's (SZ_MAJOR.SZ_MINOR.SZ_PATCH); the shared library's SONAME carries
# the major: libsplitzip.so -> libsplitzip.so.0 -> libsplitzip.so.0.1.0.
VERSION := $(shell sed -n 's/^\#define SZ_\(MAJOR\|MINOR\|PATCH\) \([0-9][0-9]*\)$$/\2/p' include/splitzip_base.h | paste -sd.)
SONAME := libsplitzip.so.$(firstword $(subst ., ,$(VERSION)))
LIB := $(BUILD)/lib/libsplitzip.a
SHLIB := $(BUILD)/lib/libsplitzip.so
SHLIB_REAL := $(SHLIB).$(VERSION)
CLI := $(BUILD)/bin/splitzip
TESTS := $(BUILD)/tests/splitzip_tests
GPU_TESTS := $(if $(GPU_TEST_SRCS),$(BUILD)/tests/splitzip_gpu_tests)
MPI_TESTS := $(if $(and $(MPI_LIBS),$(MPI_TEST_SRCS)),$(BUILD)/tests/splitzip_mpi_tests)
PERFS := $(patsubst perf/%,$(BUILD)/perf/%,$(basename $(PERF_SRCS)))
EXAMPLES := $(patsubst examples/%.cc,$(BUILD)/examples/%,$(EXAMPLE_SRCS))
# The interposer (CUDA builds only; rules below "test") and its CPU tests: a fake NCCL
# (libnccl.so.2 of its own, recording every call) and a program on it, which
# tests/interpose_fake_nccl_test.cc runs with the interposer preloaded.
ifeq ($(CUDA),1)
  INTERPOSER := $(BUILD)/lib/libsplitzip_nccl.so
  INTERPOSE_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard interpose/*.cc))
  INTERPOSE_LIB := $(BUILD)/obj/interpose/libsplitzip_pnccl.a
  FAKE_NCCL := $(BUILD)/tests/interpose/libnccl.so.2
  FAKE_APP := $(BUILD)/tests/interpose/fake_app
  INTERPOSE_TEST_ENV := SZ_TEST_INTERPOSER=$(INTERPOSER) SZ_TEST_FAKE_APP=$(FAKE_APP)
endif
# The ib wire on a NIC emulated inside one process (tests/ib_fake/): a fake libibverbs.so.1 that
# a program on the library loads through LD_LIBRARY_PATH, and such a program (ranks as threads);
# tests/ib_fake_test.cc runs it. Built with the ib wire (CUDA and rdma-core's headers).
ifeq ($(CUDA)$(IBVERBS),11)
  IB_FAKE := $(BUILD)/tests/ib_fake/libibverbs.so.1
  IB_FAKE_APP := $(BUILD)/tests/ib_fake/ib_host_app
  IB_FAKE_TEST_ENV := SZ_TEST_IB_FAKE_APP=$(IB_FAKE_APP) SZ_TEST_IB_FAKE_DIR=$(dir $(IB_FAKE))
endif

.PHONY: all lib test gpu-test demo install uninstall clean fuzz print-gencode print-nvcc kept-objects
.DEFAULT_GOAL := all
# The examples' and perf tests' objects are named only by pattern rules, which would make them
# intermediate files, deleted after each build (and `make demo` after `make` would recompile).
# Naming them here keeps them; unlike .SECONDARY, a deleted object is still rebuilt.
kept-objects: $(EXAMPLE_SRCS:%.cc=$(BUILD)/obj/%.o) $(patsubst %,$(BUILD)/obj/%.o,$(basename $(PERF_SRCS))) \
  $(PERF_COMMON:%.cc=$(BUILD)/obj/%.o) $(if $(FAKE_APP),$(BUILD)/obj/tests/interpose/fake_app.o $(BUILD)/obj/tests/interpose/fake_nccl.o) \
  $(if $(IB_FAKE),$(BUILD)/obj/tests/ib_fake/fake_verbs.o $(BUILD)/obj/tests/ib_fake/ib_host_app.o)
all: lib $(CLI) $(TESTS) $(GPU_TESTS) $(MPI_TESTS) $(PERFS) $(EXAMPLES) $(INTERPOSER) $(FAKE_APP) $(IB_FAKE) $(IB_FAKE_APP)
lib: $(LIB) $(SHLIB)

# Objects of a CUDA and a CUDA=0 build differ (and with or without the ib wire, and for other
# GPU architectures, and PROFILE=1): switching rebuilds everything in $(BUILD).
CONFIG_STAMP := $(BUILD)/.config-cuda$(CUDA)-ib$(IBVERBS)$(if $(filter 1,$(PROFILE)),-profile)$(if $(filter 1,$(CUDA)),-$(firstword $(shell echo '$(NVCC_GENCODE)' | cksum)))
$(CONFIG_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.config-cuda*
	@touch $@

$(BUILD)/obj/codec/chunk_avx2.o: override CXXFLAGS += -mavx2
$(BUILD)/obj/codec/chunk_bmi2.o: override CXXFLAGS += -mbmi2
$(BUILD)/obj/codec/chunk_avx2_narrow.o: override CXXFLAGS += -mavx2 -mbmi2
$(BUILD)/obj/codec/chunk_avx512_e4m3.o: override CXXFLAGS += -mavx512f -mavx512bw -mavx512vbmi
$(BUILD)/obj/%.o: %.cc $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/%.o: %.cu $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^
$(SHLIB_REAL): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LDFLAGS) $(LDLIBS)
$(SHLIB): $(SHLIB_REAL)
	ln -sf $(notdir $<) $(BUILD)/lib/$(SONAME) && ln -sf $(SONAME) $@

$(CLI): $(TOOL_SRCS:%.cc=$(BUILD)/obj/%.o) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(TESTS): $(TEST_SRCS:%.cc=$(BUILD)/obj/%.o) $(INTERPOSE_LOGIC) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(LDFLAGS) -lgtest -lgtest_main $(LDLIBS)

$(BUILD)/tests/splitzip_gpu_tests: $(patsubst %,$(BUILD)/obj/%.o,$(basename $(GPU_TEST_SRCS))) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(LDFLAGS) -lgtest -lgtest_main $(LDLIBS)

$(BUILD)/obj/perf/%.o $(BUILD)/obj/tests/mpi/%.o $(BUILD)/obj/examples/%.o: override CPPFLAGS += $(MPI_CFLAGS) $(MPI_DEFS)
$(BUILD)/examples/%: $(BUILD)/obj/examples/%.o $(TENSOR_IO) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(MPI_LIBS)

$(BUILD)/perf/%: $(BUILD)/obj/perf/%.o $(PERF_COMMON:%.cc=$(BUILD)/obj/%.o) $(TENSOR_IO) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(MPI_LIBS) -ldl

$(BUILD)/tests/splitzip_mpi_tests: $(MPI_TEST_SRCS:%.cc=$(BUILD)/obj/%.o) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(LDFLAGS) -lgtest $(LDLIBS) $(MPI_LIBS)

# The drop-in NCCL interposer (interpose/, docs/INTERPOSE.md): LD_PRELOAD it into a program
# that uses NCCL. It carries its own copy of the library, whose NCCL references are renamed to
# NCCL's pncclX names (forwarded to the real NCCL by interpose/real_nccl.cc, so they never come
# back through the interposer), and the static CUDA runtime; it exports only the NCCL calls it
# wraps (interpose/exports.map) and links no libnccl (the program's own is found at run time).
ifeq ($(CUDA),1)
$(INTERPOSE_LIB): $(LIB)
	nm -u $< | awk '$$2 ~ /^nccl[A-Z]/ { print $$2, "p" $$2 }' | sort -u > $@.syms
	objcopy --redefine-syms=$@.syms $< $@
$(INTERPOSER): $(INTERPOSE_OBJS) $(INTERPOSE_LIB) interpose/exports.map
	@mkdir -p $(dir $@)
	$(CXX) -shared -Wl,-soname,libsplitzip_nccl.so -Wl,--version-script=interpose/exports.map -Wl,-z,defs \
	  -Wl,--exclude-libs,ALL -o $@ $(INTERPOSE_OBJS) $(INTERPOSE_LIB) $(LDFLAGS) -lisal -lfmt -lcrypto \
	  -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -pthread
$(FAKE_NCCL): $(BUILD)/obj/tests/interpose/fake_nccl.o
	@mkdir -p $(dir $@)
	$(CXX) -shared -Wl,-soname,libnccl.so.2 -o $@ $^ -ldl -pthread
$(FAKE_APP): $(BUILD)/obj/tests/interpose/fake_app.o $(FAKE_NCCL)
	$(CXX) -o $@ $< -L$(dir $(FAKE_NCCL)) -l:libnccl.so.2 -Wl,-rpath,'$$ORIGIN' -ldl -pthread
endif
ifneq ($(IB_FAKE),)
$(IB_FAKE): $(BUILD)/obj/tests/ib_fake/fake_verbs.o
	@mkdir -p $(dir $@)
	$(CXX) -shared -Wl,-soname,libibverbs.so.1 -o $@ $^ -pthread
$(IB_FAKE_APP): $(BUILD)/obj/tests/ib_fake/ib_host_app.o $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(LDFLAGS) $(LDLIBS)
endif

# The tests' ranks all run on this machine: their sockets stay on loopback unless told otherwise.
test: $(TESTS) $(CLI) $(INTERPOSER) $(FAKE_APP) $(IB_FAKE) $(IB_FAKE_APP)
	SZ_SOCKET_IFNAME=$${SZ_SOCKET_IFNAME:-lo} $(INTERPOSE_TEST_ENV) $(IB_FAKE_TEST_ENV) $(TESTS)

# Without a GPU every GPU test skips, and the binary says so (tests/gpu/gpu_presence.cc).
gpu-test: $(GPU_TESTS)
ifeq ($(CUDA),1)
	$(GPU_TESTS)
else
	@echo "gpu-test: SKIPPED: built without CUDA (no nvcc under CUDA_HOME=$(CUDA_HOME)): install the CUDA toolkit and run make gpu-test on a machine with an NVIDIA GPU"
endif

print-gencode:
	@echo $(NVCC_GENCODE)
print-nvcc:
	@echo $(if $(filter 1,$(CUDA)),$(NVCC))

# The real KV sample: its exponent statistics, then a bit-exact compress / decompress round trip.
# The main job (examples/disagg_kv_transfer.cc): a prefill -> decode transfer of the shipped real
# KV sample between two ranks, SplitZip against the raw wire. Two MPI ranks when mpirun is there
# (else two threads); host pools over tcp on loopback without a GPU, device pools over NCCL
# with GPUs. First the sample's exponent statistics.
DEMO_KV ?= tests/data/tinystories_kv_eval_bf16.safetensors
DEMO_RUN := $(if $(shell command -v mpirun 2>/dev/null),mpirun --bind-to none --oversubscribe --allow-run-as-root -np 2 -x SZ_SOCKET_IFNAME)
demo: $(CLI) $(BUILD)/examples/disagg_kv_transfer
	$(CLI) stats --dtype bf16 $(DEMO_KV)
	SZ_SOCKET_IFNAME=$${SZ_SOCKET_IFNAME:-lo} $(DEMO_RUN) $(BUILD)/examples/disagg_kv_transfer --data $(DEMO_KV)

# libFuzzer over the host decoder (tests/fuzz/decode_fuzzer.cc) with ASan and UBSan, on the CPU
# codec compiled without CUDA (so it builds wherever clang does); the seed corpus is frames that
# make_seeds, linked with the same objects, encodes. `make fuzz` builds and runs the fuzzer for
# FUZZ_TIME seconds; new corpus entries and crash inputs stay in $(BUILD)/fuzz.
FUZZ_CXX ?= clang++
FUZZ_TIME ?= 60
FUZZ_FLAGS := -std=c++17 -O1 -g $(WARN) -Iinclude -I. $(if $(DEPS),-I$(DEPS)/usr/include) \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
# The codec and the error, parameter and logging helpers it uses; not the communicator.
FUZZ_OBJS := $(patsubst %.cc,$(BUILD)/fuzz/obj/%.o,$(wildcard codec/*.cc) base/result.cc base/param.cc base/debug.cc)
FUZZER := $(BUILD)/fuzz/decode_fuzzer
FUZZ_SEEDS := $(BUILD)/fuzz/make_seeds

$(BUILD)/fuzz/obj/codec/chunk_avx2.o: FUZZ_FLAGS += -mavx2
$(BUILD)/fuzz/obj/codec/chunk_bmi2.o: FUZZ_FLAGS += -mbmi2
$(BUILD)/fuzz/obj/codec/chunk_avx2_narrow.o: FUZZ_FLAGS += -mavx2 -mbmi2
$(BUILD)/fuzz/obj/codec/chunk_avx512_e4m3.o: FUZZ_FLAGS += -mavx512f -mavx512bw -mavx512vbmi
$(BUILD)/fuzz/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(FUZZER): tests/fuzz/decode_fuzzer.cc $(FUZZ_OBJS)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDFLAGS) -lisal -pthread
$(FUZZ_SEEDS): tests/fuzz/make_seeds.cc $(FUZZ_OBJS)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -o $@ $^ $(LDFLAGS) -lisal -pthread

fuzz: $(FUZZER) $(FUZZ_SEEDS)
	rm -rf $(BUILD)/fuzz/seeds && mkdir -p $(BUILD)/fuzz/seeds $(BUILD)/fuzz/corpus
	$(FUZZ_SEEDS) $(BUILD)/fuzz/seeds
	$(FUZZER) -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
	    $(BUILD)/fuzz/corpus $(BUILD)/fuzz/seeds
-include $(FUZZ_OBJS:.o=.d)

# The header, both libraries, the CLI (it links the static library: nothing to find at run
# time), the NCCL interposer (CUDA builds), splitzip.pc and a CMake package
# (find_package(splitzip): target splitzip::splitzip).
# Programs linked through either find the shared library without LD_LIBRARY_PATH: pkg-config's
# Libs carry an rpath to $(PREFIX)/lib, and CMake puts one in the programs it builds.
ABS_PREFIX = $(abspath $(PREFIX))
# The public C API: splitzip.h and the parts it includes.
PUBLIC_HEADERS = include/splitzip.h include/splitzip_base.h include/splitzip_codec.h include/splitzip_comm.h
INSTALL_LIB = $(DESTDIR)$(ABS_PREFIX)/lib
INSTALL_CMAKE = $(INSTALL_LIB)/cmake/splitzip
PACKAGING_SED = sed -e 's|@PREFIX@|$(ABS_PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@SONAME@|$(SONAME)|g' \
  -e 's|@LIBS_PRIVATE@|$(strip $(LDLIBS))|g'
install: lib $(CLI) $(INTERPOSER)
	install -d $(DESTDIR)$(ABS_PREFIX)/include $(DESTDIR)$(ABS_PREFIX)/bin $(INSTALL_LIB)/pkgconfig $(INSTALL_CMAKE)
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(ABS_PREFIX)/include/
	install -m 644 $(LIB) $(INSTALL_LIB)/
	install -m 755 $(SHLIB_REAL) $(INSTALL_LIB)/
	ln -sf $(notdir $(SHLIB_REAL)) $(INSTALL_LIB)/$(SONAME)
	ln -sf $(SONAME) $(INSTALL_LIB)/libsplitzip.so
	install -m 755 $(CLI) $(DESTDIR)$(ABS_PREFIX)/bin/
	$(if $(INTERPOSER),install -m 755 $(INTERPOSER) $(INSTALL_LIB)/)
	$(PACKAGING_SED) packaging/splitzip.pc.in > $(INSTALL_LIB)/pkgconfig/splitzip.pc
	$(PACKAGING_SED) packaging/splitzipConfig.cmake.in > $(INSTALL_CMAKE)/splitzipConfig.cmake
	$(PACKAGING_SED) packaging/splitzipConfigVersion.cmake.in > $(INSTALL_CMAKE)/splitzipConfigVersion.cmake

uninstall:
	rm -f $(addprefix $(DESTDIR)$(ABS_PREFIX)/,$(PUBLIC_HEADERS)) $(DESTDIR)$(ABS_PREFIX)/bin/splitzip \
	  $(INSTALL_LIB)/libsplitzip.a $(INSTALL_LIB)/libsplitzip.so $(INSTALL_LIB)/$(SONAME) \
	  $(INSTALL_LIB)/$(notdir $(SHLIB_REAL)) $(INSTALL_LIB)/libsplitzip_nccl.so $(INSTALL_LIB)/pkgconfig/splitzip.pc \
	  $(INSTALL_CMAKE)/splitzipConfig.cmake $(INSTALL_CMAKE)/splitzipConfigVersion.cmake
	-rmdir $(INSTALL_CMAKE) 2>/dev/null

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
