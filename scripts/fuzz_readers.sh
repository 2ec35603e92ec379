#!/usr/bin/env bash
# Builds the libFuzzer targets of the graph and call JSON readers (fuzz/, clang) and runs
# each for SECONDS (default 60) on the committed seed corpus. Exit 0 only with no crash, no
# sanitizer report, no hang (-timeout) and no input past the memory limit. CI runs it;
# a longer local run: scripts/fuzz_readers.sh 3600.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

CXX=clang++ cmake -S fuzz -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)"

# New inputs go to a scratch folder (libFuzzer writes to the first corpus folder); the
# committed seeds stay as they are.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() {
  local target=$1
  shift
  mkdir -p "$scratch/$target"
  ./build-fuzz/"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -dict=fuzz/json.dict -print_final_stats=1 \
    -artifact_prefix="$scratch/" "$scratch/$target" "$@" 2>&1 | grep -E "^stat::|Done|ERROR|==" || true
  # libFuzzer exits non-zero on a finding; pipefail would lose it behind grep, so check.
  if compgen -G "$scratch/crash-*" >/dev/null || compgen -G "$scratch/timeout-*" >/dev/null ||
     compgen -G "$scratch/oom-*" >/dev/null || compgen -G "$scratch/leak-*" >/dev/null; then
    echo "fuzz_readers: $target found an input that fails:" >&2
    for f in "$scratch"/crash-* "$scratch"/timeout-* "$scratch"/oom-* "$scratch"/leak-*; do
      [ -e "$f" ] && { echo "  $f:" >&2; head -c 400 "$f" | od -c | head -8 >&2; }
    done
    exit 1
  fi
}
run graph_json_fuzz fuzz/corpus/graph_json examples tests/hostile
run call_json_fuzz fuzz/corpus/call_json examples/calls
echo "fuzz_readers: no crash, hang or memory blow-up in ${seconds} s per reader"
