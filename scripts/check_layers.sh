#!/usr/bin/env bash
# The layering of docs/ARCHITECTURE.md, checked: every `#include "<folder>/..."` in src/<layer>/
# names a folder the table lets that layer depend on. Every layer's include path holds all of
# src/ (the includes are spelled from there), so the compiler cannot catch a wrong-way
# include; this does (a ctest, Docs.LayersIncludeOnlyTheLayersBefore). Exit 0 when every
# include is allowed, 1 with one line per wrong-way include otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
# What each layer may include besides itself. runtime/numeric.h (the fusedgemm_numeric
# library, element conversions) is the one file of runtime that reference may read.
declare -A allowed=(
  [graph]=""
  [fusion]="graph"
  [kernels]=""
  [recipe]="graph fusion kernels"
  [codegen]="graph fusion recipe kernels"
  [jit]="graph"
  [runtime]="graph fusion recipe kernels codegen"
  [reference]="graph fusion runtime/numeric.h"
  [fallback]="graph fusion recipe kernels codegen jit runtime"
  [api]="graph fusion recipe kernels codegen jit runtime fallback"
)
status=0
for dir in src/*/; do
  layer=$(basename "$dir")
  if [ -z "${allowed[$layer]+set}" ]; then
    echo "src/$layer/: a layer docs/ARCHITECTURE.md and this script do not list"
    status=1
    continue
  fi
  while IFS=: read -r file line text; do
    target=$(sed -E 's/^#include "([^"]+)".*/\1/' <<<"$text")
    folder=${target%%/*}
    [ "$folder" = "$layer" ] && continue
    ok=0
    for a in ${allowed[$layer]}; do
      if [ "$a" = "$folder" ] || [ "$a" = "$target" ]; then ok=1; fi
    done
    if [ $ok = 0 ]; then
      echo "$file:$line: $layer includes \"$target\"; $layer may include: ${allowed[$layer]:-nothing of src/}"
      status=1
    fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$dir" | grep -v '#include "fusedgemm/')
done
exit $status
