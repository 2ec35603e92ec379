#!/usr/bin/env bash
# Here, on the build machine (no GPU needed): builds Release, compiles every kernel the GPU
# run will build into a kernel cache (the GPU suites and the benchmarks on the compile-only
# device, planned for SMS multiprocessors, 132 by default: the H200's), and packs what the
# GPU machine needs into gpu-carry/ (binaries, the two system libraries its image lacks, the
# cache as a tarball): carry it with the device tool (`carry: ["gpu-carry"]`) and run
# scripts/gpu_run.sh there. The cache key holds no driver, so the GPU run hits every entry.
#
# PACK_CASES (device_throughput --case selections, separated by spaces) packs for a timing
# run alone (scripts/gpu_locked_clocks.sh with those cases): device_throughput and the
# cases' kernels, in a minute instead of the GPU suites' twenty:
#   PACK_CASES="fp8_e4m3:4096x4096x4096 fp8_e4m3:4096x4096x4096:pp128x128c1x2" \
#     bash scripts/gpu_pack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
sms=${SMS:-132}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
cache=$(mktemp -d)
export FUSEDGEMM_CACHE_DIR=$cache
# cudart and the benchmark link libcuda; the toolkit's stub satisfies the loader here.
stubs=$(mktemp -d)
ln -s /usr/local/cuda/lib64/stubs/libcuda.so "$stubs/libcuda.so.1"
binaries=(build/bench/device_throughput)
if [ -n "${PACK_CASES:-}" ]; then
  selections=()
  for selection in $PACK_CASES; do selections+=(--case "$selection"); done
  # Each case's kernel configuration, or why it is not built.
  LD_LIBRARY_PATH=$stubs ./build/bench/device_throughput --compile-only "$sms" \
    "${selections[@]}" | grep '^  '
else
  # The random-graph sweep's first seeds only (PACK_SWEEP_SEEDS): the GPU run compiles the
  # rest itself, on all of that machine's cores, before it executes any.
  FUSEDGEMM_SWEEP_SEEDS=${PACK_SWEEP_SEEDS:-40} FUSEDGEMM_TEST_WARM_SM_COUNT=$sms \
    ./build/tests/fusedgemm_tests --gtest_filter='*Gpu*' \
    >/dev/null 2>&1 || true  # every check after build() fails there: only the cache counts
  ./build/fusedgemm compile --sm-count "$sms" examples/ >/dev/null
  ./build/fusedgemm compile --sm-count "$sms" --batch 1 --m 256 --n 256 --k 128 examples/ \
    >/dev/null || true
  LD_LIBRARY_PATH=$stubs ./build/bench/device_throughput --compile-only "$sms" >/dev/null
  binaries+=(build/tests/fusedgemm_tests build/fusedgemm build/bench/gpu_bench)
fi
rm -rf gpu-carry
mkdir -p gpu-carry/bin gpu-carry/libs
cp "${binaries[@]}" gpu-carry/bin/
cp /lib/x86_64-linux-gnu/libfmt.so.9 /lib/x86_64-linux-gnu/libcrypto.so.3 gpu-carry/libs/
tar -C "$cache" -cJf gpu-carry/cache.tar.xz .
# The Python package for the GPU machine's Python 3.12: PYTHON312 names an interpreter here
# with scikit-build-core and nanobind (the wheel links the same libfmt and libcrypto).
if [ -n "${PYTHON312:-}" ]; then
  "$PYTHON312" -m pip wheel -q --no-build-isolation --no-deps -w gpu-carry/wheels .
fi
echo "gpu-carry: $(find "$cache" -name '*.cubin' | wc -l) kernels, $(du -sh gpu-carry | cut -f1)"
rm -rf "$cache" "$stubs"
