#!/usr/bin/env bash
# The long call-fuzzer run (issue 10): 10^6 calls (or $1) from a random seed (or $2) on the
# host device, against the independent legality oracle and the fp64 reference. CI runs
# 10^5 calls with a fixed seed (CallFuzz.*); a failure prints a replay line
# (FUSEDGEMM_CALL_FUZZ_SEED / FUSEDGEMM_CALL_FUZZ_ONLY). With GPU=1 it runs the CUDA-device
# test (CallFuzzGpu.*) instead. Expects a configured build in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-1000000}"
seed="${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
filter='CallFuzz.*'
if [[ "${GPU:-0}" == 1 ]]; then filter='CallFuzzGpu.*'; fi
cmake --build build -j"$(nproc)" --target fusedgemm_tests
echo "call fuzz: ${calls} calls, seed ${seed}, ${filter}"
FUSEDGEMM_CALL_FUZZ_CALLS="${calls}" FUSEDGEMM_CALL_FUZZ_SEED="${seed}" \
  ./build/tests/fusedgemm_tests --gtest_filter="${filter}"
