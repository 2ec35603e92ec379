#!/usr/bin/env bash
# The CMake package as a user meets it: install the built tree into a fresh prefix, then
# configure, build and run examples/cpp/ against that prefix alone (find_package(fusedgemm),
# fusedgemm::fusedgemm). Fails when an installed header, library, dependency or the config
# file is missing, or when the example's result is wrong.
# Usage: consumer_build.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/fusedgemm/version.h"
version=$(sed -n 's/^project(fusedgemm VERSION \([0-9.]*\).*/\1/p' "$source/CMakeLists.txt")
test "$("$work/prefix/bin/fusedgemm" --version)" = "fusedgemm $version"
cmake -S "$source/examples/cpp" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/linear_gelu"
