#!/usr/bin/env bash
# On the GPU machine (the device tool), from the repository root, with gpu-carry/ made by
# scripts/gpu_pack.sh carried along. Steps, each under its own time limit, results under
# $OUT (or ./gpu-out):
#   1. a smoke test of the mainloop (the whole run stops if it hangs or fails)
#   2. the GPU suites (TESTS: a gtest filter, default *Gpu*; "none" skips)
#   3. `fusedgemm run examples/` on the GPU
#   4. host cost of execute (bench/gpu_bench.cpp)
#   5. device throughput against cuBLASLt (BENCH: quick, full or none; default quick;
#      BENCH_ONLY: only the cases whose label contains it, device_throughput's --only)
#   6. with NCU set to a device_throughput case label: Nsight Compute on our kernel of that
#      case (full set, clocks and caches as they are, the 21st launch, after the warm-up
#      launches): its details page, and its source page with SASS and per-instruction
#      stall samples as CSV
#   7. when gpu-carry/wheels/ holds the package's wheel (gpu_pack.sh with PYTHON312 set) and
#      PYTHON is not 0: the Python GPU tests (pytest -m gpu) and the Python host cost
#      (bench/python_host_cost.py)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
bin=gpu-carry/bin
# The device tool brings back at most 8 files from $OUT: the default steps write 8, and NCU
# three more (run it with TOOL=0 and PYTHON=0).
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv
summary=()
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  summary+=("$name: rc $rc, $((SECONDS - start)) s")
  echo "== $name: rc $rc, $((SECONDS - start)) s"
  return $rc
}
if ! step smoke 90 $bin/fusedgemm_tests --gtest_filter='KernelShapeGpu.KFromOneStepToThreeRings'; then
  tail -40 "$out/smoke.txt"
  exit 1
fi
tests=${TESTS:-*Gpu*}
if [ "$tests" != none ]; then
  step tests "${TESTS_SECONDS:-420}" $bin/fusedgemm_tests --gtest_filter="$tests"
  grep -E "^\[  (FAILED|PASSED) |^\[==========\]|tests? ran|cases ran" "$out/tests.txt" | tail -30
fi
if [ "${TOOL:-1}" = 1 ]; then
  step tool 90 $bin/fusedgemm run examples/
  tail -3 "$out/tool.txt"
  step host_cost 90 $bin/gpu_bench
  tail -16 "$out/host_cost.txt"
fi
bench=${BENCH:-quick}
if [ "$bench" != none ]; then
  args=()
  [ "$bench" = quick ] && args+=(--quick)
  [ -n "${BENCH_ONLY:-}" ] && args+=(--only "$BENCH_ONLY")
  step throughput "${BENCH_SECONDS:-240}" $bin/device_throughput "$out/device_throughput.csv" "${args[@]}"
  cat "$out/throughput.txt"
fi
if [ -n "${NCU:-}" ]; then
  # device_throughput's warm-up off, so its first launches are the case's: ours and
  # cuBLASLt's alternate in batches, and launch 21 of ours is past the first batch.
  step ncu "${NCU_SECONDS:-300}" ncu --clock-control none --cache-control none --set full \
    -k regex:fusedgemm --launch-skip 20 --launch-count 1 -f -o /tmp/ncu-case \
    $bin/device_throughput --warm-up 0 --only "$NCU"
  tail -5 "$out/ncu.txt"
  ncu --import /tmp/ncu-case.ncu-rep --page details > "$out/ncu_details.txt" 2>&1
  ncu --import /tmp/ncu-case.ncu-rep --page source --csv --print-source sass \
    > "$out/ncu_sass.csv" 2>&1
fi
if [ "${PYTHON:-1}" != 0 ] && ls gpu-carry/wheels/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fusedgemm-site \
    gpu-carry/wheels/*.whl
  export PYTHONPATH=/tmp/fusedgemm-site PYTHONUNBUFFERED=1
  step python "${PYTHON_SECONDS:-300}" python3 -m pytest -q -m gpu -p no:cacheprovider python/tests
  tail -15 "$out/python.txt"
  step python_host_cost 120 python3 bench/python_host_cost.py
  cat "$out/python_host_cost.txt"
fi
printf '%s\n' "${summary[@]}"
