#!/usr/bin/env python3
"""scripts/ncu_waits.py groups sampled warp states by the barrier a warp waits on.

A synthetic source-page export in Nsight Compute's CSV shape: a try-wait whose samples land
on the branch that reads its predicate (past interleaved address math), a retry loop (YIELD,
try-wait, branch), a branch whose predicate another instruction rewrote (not a wait), wgmma,
a named barrier and plain arithmetic.
"""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "ncu_waits.py")

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)",'
          '"Warp Stall Sampling (Not-issued Samples)","# Samples"')
LINES = [  # address, source, samples
    ("0x10", "      SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R160+URZ], R155", 1),
    ("0x20", "      LOP3.LUT R152, R2, 0x3fc00, RZ, 0xc0, !PT", 2),
    ("0x30", "@!P0  BRA 0x100", 10),
    ("0x40", "      HGMMA.64x128x16.F32.BF16 R24, gdesc[UR28], R24, gsb0", 3),
    ("0x50", "      ISETP.NE.AND P0, PT, R2, 0x4, PT", 0),
    ("0x60", "@!P0  BRA 0x10", 4),
    ("0x70", "      YIELD", 1),
    ("0x80", "      SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R0+URZ+0x2e008], R21", 1),
    ("0x90", "@!P0  BRA 0x70", 5),
    ("0xa0", "      BAR.SYNC.DEFER_BLOCKING 0x1, 0x80", 3),
]


class NcuWaits(unittest.TestCase):
    def run_script(self, text):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "k.sass.csv")
            with open(path, "w") as f:
                f.write(text)
            return subprocess.run([sys.executable, SCRIPT, path, "3"], capture_output=True,
                                  text=True)

    def test_groups_samples_by_what_the_warp_waits_on(self):
        rows = [f'"{a}","{s}","{n}","0","{n}"' for a, s, n in LINES]
        done = self.run_script('"Kernel Name","k",\n' + HEADER + "\n" + "\n".join(rows) + "\n")
        self.assertEqual(done.returncode, 0, done.stderr)
        shares = {}
        for line in done.stdout.splitlines():
            if line.startswith("hottest"):
                break
            if "%" in line:
                share, name = line.split("%", 1)
                shares[name.strip()] = float(share)
        self.assertEqual(shares, {
            "wait [R160+URZ]": 36.7,  # 1 + 10 of 30
            "wait [R0+URZ+0x2e008]": 23.3,  # YIELD, try-wait and branch: 7
            "other": 20.0,  # the LOP3 and the branch on the rewritten P0: 6
            "wgmma": 10.0,
            "named barrier": 10.0,
        })
        self.assertIn("0x30", done.stdout.split("hottest lines:")[1].splitlines()[1])

    def test_a_report_without_samples_is_an_error(self):
        rows = [f'"{a}","{s}","0","0","0"' for a, s, _ in LINES]
        done = self.run_script(HEADER + "\n" + "\n".join(rows) + "\n")
        self.assertEqual(done.returncode, 1)
        self.assertIn("no warp-state samples", done.stderr)


if __name__ == "__main__":
    unittest.main()
