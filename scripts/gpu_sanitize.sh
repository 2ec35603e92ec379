#!/usr/bin/env bash
# On the GPU machine, with gpu-carry/ (scripts/gpu_pack.sh): compute-sanitizer's memcheck,
# racecheck and synccheck over one plan per flavor — every example graph — at a ragged
# shape (M 200, N 272, K 144: no multiple of any tile, fp8-legal), each tool under its own
# time limit. Every tool must report 0 errors. Results under $OUT (or ./gpu-out).
# SHAPE overrides the shape: SHAPE="--m 20 --n 528 --k 1280" is decode-size, where calls
# split K (their kernels compile there, not from the packed cache); SHAPE="--m 256 --n 34816
# --k 1104" is two whole waves of 128x256 2-CTA tiles on 132 SMs and a last wave that splits
# K. Each call runs once: `--timed-calls 0` (racecheck's host memory grows with every launch:
# 200 timed calls at that shape took the 128 GB of the H100 machine).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
# fallback_only is left out: `run --m/--n/--k` cannot resize its chained GEMM yet.
examples=$(mktemp -d)
for f in examples/*.json; do
  [ "$(basename "$f")" = fallback_only.json ] || ln -s "$PWD/$f" "$examples/"
done
status=0
for tool in memcheck racecheck synccheck; do
  start=$SECONDS
  timeout "${SANITIZE_SECONDS:-150}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
    gpu-carry/bin/fusedgemm run --timed-calls 0 ${SHAPE:---m 200 --n 272 --k 144} "$examples" > "$out/sanitize_$tool.txt" 2>&1
  rc=$?
  echo "== $tool: rc $rc, $((SECONDS - start)) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.txt" | tail -1)"
  grep -E "graphs:" "$out/sanitize_$tool.txt" | tail -1
  [ $rc -eq 0 ] || status=1
done
exit $status
