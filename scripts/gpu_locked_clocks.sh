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
# median and minimum in microseconds. With OLD set to other builds' device_throughput, one or
# several separated by spaces (and OLD_CACHE to their kernel cache tarballs, if they have
# them): our kernel only, this build and each of OLD alternating, PASSES times (2), launches
# 11-18 of each; a build of OLD is named "old" when OLD names one, else by its binary's
# folder. Rows in $out/locked_clocks.csv.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
read -ra olds <<< "${OLD:-}"
read -ra old_caches <<< "${OLD_CACHE:-}"
for cache in "${old_caches[@]}"; do tar -xJf "$cache" -C "$FUSEDGEMM_CACHE_DIR"; done
csv=$out/locked_clocks.csv
echo "pass,case,binary,kernel,launches,median_us,min_us" > "$csv"
# ncu --csv lines of one process -> one CSV row per kernel name (quoted where it holds a
# comma, as cuBLASLt's templated kernel names do).
summarize() {  # summarize PASS CASE BINARY < ncu-csv
  python3 -c '
import csv, statistics, sys
times = {}
for row in csv.reader(line for line in sys.stdin if line.startswith("\"")):
    if row[-3:-2] == ["gpu__time_duration.sum"]:
        times.setdefault(row[4], []).append(float(row[-1].replace(",", "")) / 1000)
out = csv.writer(sys.stdout, lineterminator="\n")
for kernel, t in times.items():
    out.writerow([*sys.argv[1:4], kernel, len(t), f"{statistics.median(t):.1f}", f"{min(t):.1f}"])
' "$@"
}
build_name() {  # build_name BINARY: new (this build's), old (OLD's one) or its folder
  if [ "$1" = gpu-carry/bin/device_throughput ]; then
    echo new
  elif [ ${#olds[@]} -eq 1 ]; then
    echo old
  else
    basename "$(dirname "$1")"
  fi
}
profile() {  # profile BINARY SELECTION NCU-ARGS...: SELECTION is an option, a space, its value
  local exe=$1 option=${2%% *} value=${2#* }
  shift 2
  timeout "${CASE_SECONDS:-120}" ncu --clock-control base --metrics gpu__time_duration.sum \
    --csv --print-units base "$@" "$exe" --warm-up 0 "$option" "$value" 2>/dev/null
}
for selection in "$@"; do
  if [ ${#olds[@]} -eq 0 ]; then
    profile gpu-carry/bin/device_throughput "$selection" --launch-skip "${SKIP:-70}" \
      --launch-count "${COUNT:-40}" | summarize 1 "$selection" new >> "$csv"
    continue
  fi
  for pass in $(seq "${PASSES:-2}"); do
    for exe in gpu-carry/bin/device_throughput "${olds[@]}"; do
      profile "$exe" "$selection" -k regex:fusedgemm --launch-skip 10 --launch-count 8 |
        summarize "$pass" "$selection" "$(build_name "$exe")" >> "$csv"
    done
  done
done
# The GPU machine's image has no `column`: the CSV as it is there.
if command -v column >/dev/null; then column -s, -t < "$csv"; else cat "$csv"; fi
