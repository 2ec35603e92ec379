#!/usr/bin/env bash
# On the GPU machine (the device tool): run what was built here, carried in build/.
# Usage: scripts/gpu_run.sh [gtest filter]. Results go to $OUT (or ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
# The build embeds this checkout's absolute path (examples, golden files); recreate it.
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
export LD_LIBRARY_PATH=$PWD/build/carry-libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FUSEDGEMM_CACHE_DIR=$PWD/build/kernel-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$out/gpu.txt" 2>&1
filter=${1:-*Gpu*}
./build/tests/fusedgemm_tests --gtest_filter="$filter" 2>&1 | tee "$out/gpu_tests.txt" | tail -60
./build/fusedgemm run examples/ 2>&1 | tee "$out/tool_run.txt" | tail -30
./build/bench/gpu_bench 2>&1 | tee "$out/gpu_bench.txt"
