#!/usr/bin/env bash
# Installs the Debian packages the C++ build, its tests and the reader fuzzers need, where
# missing (root, or sudo). The CUDA toolkit (NVRTC, headers) is a prerequisite it does not
# install: README "Prerequisites".
set -euo pipefail
need=()
for pkg in cmake g++ make nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev \
           libssl-dev clang libclang-rt-14-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq "${need[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "install_deps: no CUDA toolkit at /usr/local/cuda (set CUDAToolkit_ROOT): README" \
       "\"Prerequisites\"" >&2
fi
