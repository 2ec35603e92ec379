#!/usr/bin/env bash
# On the GPU machine, with gpu-carry/ (scripts/gpu_pack.sh): kernel durations at locked base
# clocks, where the power cap moves neither library (ratios under the cap move by up to 0.08
# from pass to pass; docs/PERF.md, runs 32-33). Each argument is one device_throughput
# selection, run in its own process under Nsight Compute:
#
#   bash scripts/gpu_locked_clocks.sh "--case bias+gelu_tanh:4096x4096x4096" "--only bf16 8192x"
#
# Default: every kernel of the case's interleaved batches (ours, cuBLASLt's, the unfused
# sequence's reduction or elementwise kernel), past the first SKIP launches (70: cuBLASLt's
# trial of its heuristic algorithms), COUNT of them (40); one row per kernel name: launches,
# median and minimum in microseconds. With OLD set to another build's device_throughput (and
# OLD_CACHE to its kernel cache tarball, if it has one): our kernel only, this build and
# OLD alternating, PASSES times (2), launches 11-18 of each. Rows in $out/locked_clocks.csv.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
[ -n "${OLD_CACHE:-}" ] && tar -xJf "$OLD_CACHE" -C "$FUSEDGEMM_CACHE_DIR"
csv=$out/locked_clocks.csv
echo "pass,case,binary,kernel,launches,median_us,min_us" > "$csv"
# ncu --csv lines of one process -> one CSV row per kernel name.
summarize() {  # summarize PASS CASE BINARY < ncu-csv
  python3 -c '
import csv, statistics, sys
times = {}
for row in csv.reader(line for line in sys.stdin if line.startswith("\"")):
    if row[-3:-2] == ["gpu__time_duration.sum"]:
        times.setdefault(row[4], []).append(float(row[-1].replace(",", "")) / 1000)
for kernel, t in times.items():
    print(f"{sys.argv[1]},{sys.argv[2]},{sys.argv[3]},{kernel},{len(t)},"
          f"{statistics.median(t):.1f},{min(t):.1f}")
' "$@"
}
profile() {  # profile BINARY SELECTION NCU-ARGS...: SELECTION is an option, a space, its value
  local exe=$1 option=${2%% *} value=${2#* }
  shift 2
  timeout "${CASE_SECONDS:-120}" ncu --clock-control base --metrics gpu__time_duration.sum \
    --csv --print-units base "$@" "$exe" --warm-up 0 "$option" "$value" 2>/dev/null
}
for selection in "$@"; do
  if [ -z "${OLD:-}" ]; then
    profile gpu-carry/bin/device_throughput "$selection" --launch-skip "${SKIP:-70}" \
      --launch-count "${COUNT:-40}" | summarize 1 "$selection" new >> "$csv"
    continue
  fi
  for pass in $(seq "${PASSES:-2}"); do
    for which in new old; do
      exe=gpu-carry/bin/device_throughput
      [ "$which" = old ] && exe=$OLD
      profile "$exe" "$selection" -k regex:fusedgemm --launch-skip 10 --launch-count 8 |
        summarize "$pass" "$selection" "$which" >> "$csv"
    done
  done
done
# The GPU machine's image has no `column`: the CSV as it is there.
if command -v column >/dev/null; then column -s, -t < "$csv"; else cat "$csv"; fi
