#!/usr/bin/env bash
# CUTLASS's own fp8 kernels beside cuBLASLt (bench/cutlass_reference.cu; docs/PERF.md run 45).
#
#   bash scripts/cutlass_reference.sh build
#     here, no GPU needed: CUTLASS's headers from PyPI's nvidia-cutlass (pinned) into
#     build/cutlass-<version>/, the program compiled for sm_90a into gpu-carry/bin/ (after
#     scripts/gpu_pack.sh, which empties gpu-carry/);
#   CONFIGS="pp128x128c1x2 co128x256c2x1" SIZES="4096x4096x4096" bash scripts/cutlass_reference.sh run
#     on the GPU machine, with gpu-carry/: each configuration at each size, timed by events
#     under the power cap, then its and cuBLASLt's kernel durations at locked base clocks
#     (ncu, one row per kernel name) in $out/cutlass_reference.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.2.0.0
case "${1:-}" in
  build)
    headers=build/cutlass-$version
    if [ ! -d "$headers/include" ]; then
      wheels=$(mktemp -d)
      python3 -m pip download -q --no-deps -d "$wheels" "nvidia-cutlass==$version"
      mkdir -p "$headers"
      python3 -m zipfile -e "$wheels"/nvidia_cutlass-*.whl "$wheels/x"
      cp -r "$wheels/x/cutlass_library/source/include" "$headers/"
      cp -r "$wheels/x/cutlass_library/source/tools/util/include" "$headers/util-include"
      rm -rf "$wheels"
    fi
    mkdir -p gpu-carry/bin
    /usr/local/cuda/bin/nvcc -std=c++17 -O3 -DNDEBUG -arch=sm_90a --expt-relaxed-constexpr \
      -diag-suppress 20012 -Ibench -I"$headers/include" -I"$headers/util-include" \
      -o gpu-carry/bin/cutlass_reference bench/cutlass_reference.cu -lcublasLt -lcuda
    ;;
  run)
    source scripts/gpu_env.sh
    csv=$out/cutlass_reference.csv
    echo "config,size,kernel,launches,median_us,min_us" > "$csv"
    for size in ${SIZES:-4096x4096x4096}; do
      for config in ${CONFIGS:-pp128x128c1x2 co128x256c2x1 co128x256c1x2}; do
        read -r m n k <<< "${size//x/ }"
        timeout 60 gpu-carry/bin/cutlass_reference "$config" "$m" "$n" "$k" 10
        # Past the 16 input fills and the first launches: 80 kernels of both libraries.
        timeout 120 ncu --clock-control base --metrics gpu__time_duration.sum --csv \
          --print-units base --launch-skip 30 --launch-count 80 \
          gpu-carry/bin/cutlass_reference "$config" "$m" "$n" "$k" 4 2>/dev/null |
          python3 -c '
import csv, statistics, sys
times = {}
for row in csv.reader(line for line in sys.stdin if line.startswith("\"")):
    if row[-3:-2] == ["gpu__time_duration.sum"]:
        times.setdefault(row[4][:60], []).append(float(row[-1].replace(",", "")) / 1000)
for kernel, t in times.items():
    print(f"{sys.argv[1]},{sys.argv[2]},{kernel},{len(t)},"
          f"{statistics.median(t):.1f},{min(t):.1f}")
' "$config" "$size" >> "$csv"
      done
    done
    cat "$csv"
    ;;
  *)
    echo "usage: bash scripts/cutlass_reference.sh build|run" >&2
    exit 2
    ;;
esac
