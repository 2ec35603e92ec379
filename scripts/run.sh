#!/usr/bin/env bash
# The main job on a fresh machine: installs what the build needs, builds Release, then builds
# and executes every example graph — on the GPU when there is one, else on the host device —
# checking every output against an fp64 reference, and ends with the summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target fusedgemm_tool
./build/fusedgemm run examples/
