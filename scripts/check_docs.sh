#!/usr/bin/env bash
# Runs every tool command that README.md and docs/*.md show in their sh code blocks (lines
# starting `build/fusedgemm `, a trailing `# comment` dropped) with the tool given (default
# build/fusedgemm), from the repository root. A documented command must run: exit 0, or 1
# where a check it shows fails (a refused call); exit 2 (a missing file, bad usage) or a crash
# means the docs and the tool disagree (issue 12).
set -uo pipefail
cd "$(dirname "$0")/.."
tool=${1:-build/fusedgemm}

commands=$(for doc in README.md docs/*.md; do
  awk -v doc="$doc" '
    /^```/ { if (open) { open = 0; sh = 0 } else { open = 1; sh = ($0 ~ /^```(sh|bash)$/) }; next }
    sh && /^build\/fusedgemm / { sub(/ +#.*/, ""); print doc ":" NR "\t" $0 }' "$doc"
done)

failed=0 total=0
while IFS=$'\t' read -r where command; do
  [ -n "$where" ] || continue
  total=$((total + 1))
  # shellcheck disable=SC2086  # the documented arguments, split as a shell would
  output=$("$tool" ${command#build/fusedgemm } 2>&1)
  code=$?
  if [ "$code" -gt 1 ]; then
    failed=$((failed + 1))
    printf 'FAIL %s: %s: exit %d\n%s\n' "$where" "$command" "$code" "$(tail -n 5 <<<"$output")"
  else
    printf 'ok   %s: %s (exit %d)\n' "$where" "$command" "$code"
  fi
done <<<"$commands"
printf '%d documented commands, %d failed\n' "$total" "$failed"
[ "$total" -gt 0 ] && [ "$failed" -eq 0 ]
