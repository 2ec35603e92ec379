#!/usr/bin/env python3
"""What a kernel's warps wait on, from Nsight Compute's sampled warp states per SASS line.

Input: the source page of a report with source counters (`ncu --set full --import-source yes
-o R ...`, then on the GPU machine `ncu --import R.ncu-rep --page source --csv --print-source
sass > R.sass.csv`). Output: the share of all warp-state samples in each group, largest first,
then the hottest lines:

  wait [ADDRESS]  an mbarrier try-wait on the barrier at ADDRESS (the SASS operand, e.g.
                  [R160+URZ] or [R0+URZ+0x2e008]) and the branch that retries or leaves it: a
                  try-wait suspends the warp in hardware, so its samples land on the branch
                  that reads its predicate. Map ADDRESS to a barrier with the kernel's
                  shared-memory layout (kernels/gemm_sm90_config.cuh: kBarrierOffset, kTurnOffset,
                  the aux barriers after kAuxOffset's buffers).
  wgmma           HGMMA issue and WARPGROUP waits (wgmma.wait_group)
  named barrier   BAR.SYNC / BAR.ARV (bar.sync between a warpgroup's warps)
  other           everything else (the epilogue's arithmetic, address math, stores)

docs/PERF.md run 49 grouped its samples this way. Usage:
  scripts/ncu_waits.py R.sass.csv [TOP]      (TOP hottest lines, 10 by default)
"""

import csv
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
TRY_WAIT = re.compile(r"SYNCS\.PHASECHK\S*TRYWAIT\s+(!?P\d),\s*(\[[^\]]*\])")
# How far back a branch looks for the try-wait that set its predicate: the compiler
# interleaves independent address math between the two (9 lines in run 49's kernel).
WINDOW = 16


def read_rows(path):
    """The SASS lines (address, source, samples) of the first kernel in the export."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip()]
    header_at = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    reader = csv.DictReader(lines[header_at:])
    rows = []
    for row in reader:
        if row["Address"] == "Address":  # a second kernel's header: one kernel only
            break
        rows.append((row["Address"], row["Source"], float(row[SAMPLES] or 0)))
    return rows


# An instruction's first operand where it is a predicate: what it writes (ISETP, PLOP3, ...).
PREDICATE_WRITE = re.compile(r"\s*(?:@!?P\d\s+)?\S+\s+(P\d)\s*,")


def group_of(rows, i):
    source = rows[i][1]
    wait = TRY_WAIT.search(source)
    if wait:
        return "wait " + wait.group(2)
    # A retry loop's YIELD, just before its try-wait.
    if re.match(r"\s*YIELD\b", source):
        for later in rows[i + 1:i + 3]:
            wait = TRY_WAIT.search(later[1])
            if wait:
                return "wait " + wait.group(2)
    branch = re.match(r"\s*@!?(P\d)\s+BRA\b", source)
    if branch:
        predicate = branch.group(1)
        for j in range(i - 1, max(-1, i - 1 - WINDOW), -1):
            earlier = rows[j][1]
            wait = TRY_WAIT.search(earlier)
            if wait and wait.group(1).lstrip("!") == predicate:
                return "wait " + wait.group(2)
            # Another write of the predicate: the branch tests that instead.
            write = PREDICATE_WRITE.match(earlier)
            if write and write.group(1) == predicate:
                break
    if "HGMMA" in source or "WARPGROUP" in source:
        return "wgmma"
    if re.search(r"\bBAR\.(SYNC|ARV)", source):
        return "named barrier"
    return "other"


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    top = int(argv[2]) if len(argv) == 3 else 10
    rows = read_rows(argv[1])
    total = sum(samples for _, _, samples in rows)
    if total == 0:
        print(f"{argv[1]}: no warp-state samples (was the report taken with source counters?)",
              file=sys.stderr)
        return 1
    groups = {}
    for i, (_, _, samples) in enumerate(rows):
        if samples:
            name = group_of(rows, i)
            groups[name] = groups.get(name, 0.0) + samples
    print(f"{int(total)} samples over {len(rows)} SASS lines")
    for name, samples in sorted(groups.items(), key=lambda item: -item[1]):
        print(f"{100 * samples / total:6.1f}%  {name}")
    print("hottest lines:")
    hottest = sorted(range(len(rows)), key=lambda i: -rows[i][2])[:top]
    for i in hottest:
        address, source, samples = rows[i]
        print(f"{100 * samples / total:6.1f}%  {address}  {source.strip()[:70]}  ({group_of(rows, i)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
