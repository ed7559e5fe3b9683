// The smallest kernel: compiled with the Makefile's default NVCC_GENCODE by tests/fatbin/arch_test.py,
// which checks the architectures in its fat binary (the library's kernels take minutes per arch).
__global__ void probe(int* p) { p[threadIdx.x] = 1; }
