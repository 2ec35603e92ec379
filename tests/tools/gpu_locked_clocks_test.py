#!/usr/bin/env python3
"""scripts/gpu_locked_clocks.sh timed against a fake Nsight Compute.

The script runs from a copy of scripts/ with a stand-in `ncu` first on PATH, which prints the
CSV lines Nsight Compute prints for `--metrics gpu__time_duration.sum --csv`, durations set
by the folder of the binary it profiles, and one kernel name holding commas (as cuBLASLt's
templated reduce kernel's does). Checked: one row per kernel, its name one column; with OLD
naming several builds, each named by its folder and run once a pass beside this build.
"""

import csv
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(__file__), "..", "..", "scripts")

FAKE_NCU = r'''#!/usr/bin/env python3
import os, sys
exe = next(a for a in sys.argv[1:] if a.endswith("device_throughput"))
build = os.path.basename(os.path.dirname(exe))
ns = {"bin": 100000, "a": 200000, "b": 300000}[build]
kernels = ["fusedgemm_kernel"]
if "regex:fusedgemm" not in sys.argv:
    kernels.append("void cublasLt::splitKreduce_kernel<32, 16, int>(Params)")
print("==PROF== Connected to process")
for kernel in kernels:
    for i in range(3):
        print(f'"{i}","1","device_throughput","host","{kernel}","1","7","(128, 1, 1)",'
              f'"(384, 1, 1)","0","9.0","gpu__time_duration.sum","ns","{ns + 1000 * i:,}"')
'''


def write_executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class GpuLockedClocks(unittest.TestCase):
    def run_script(self, folder, env_extra, *selections):
        root = os.path.join(folder, "repo")
        os.makedirs(os.path.join(root, "scripts"))
        for name in ("gpu_locked_clocks.sh", "gpu_env.sh"):
            shutil.copy(os.path.join(SCRIPTS, name), os.path.join(root, "scripts", name))
        os.makedirs(os.path.join(root, "gpu-carry", "bin"))
        write_executable(os.path.join(root, "gpu-carry", "bin", "device_throughput"), "")
        with tarfile.open(os.path.join(root, "gpu-carry", "cache.tar.xz"), "w:xz"):
            pass
        for build in ("a", "b"):
            os.makedirs(os.path.join(folder, build))
            write_executable(os.path.join(folder, build, "device_throughput"), "")
        tools = os.path.join(folder, "tools")
        os.makedirs(tools)
        write_executable(os.path.join(tools, "ncu"), FAKE_NCU)
        out = os.path.join(folder, "out")
        env = dict(os.environ, PATH=tools + os.pathsep + os.environ["PATH"], OUT=out)
        env.update(env_extra)
        done = subprocess.run(["bash", os.path.join(root, "scripts", "gpu_locked_clocks.sh"),
                               *selections], capture_output=True, text=True, env=env, cwd=folder)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(out, "locked_clocks.csv"), newline="") as f:
            return list(csv.DictReader(f))

    def test_every_kernel_of_a_case_is_one_row(self):
        with tempfile.TemporaryDirectory() as folder:
            rows = self.run_script(folder, {}, "--case bf16:128x4096x4096")
        self.assertEqual([(r["binary"], r["kernel"], r["launches"], r["median_us"])
                          for r in rows],
                         [("new", "fusedgemm_kernel", "3", "101.0"),
                          ("new", "void cublasLt::splitKreduce_kernel<32, 16, int>(Params)",
                           "3", "101.0")])
        self.assertEqual(rows[0]["case"], "--case bf16:128x4096x4096")

    def test_several_old_builds_alternate_with_this_one(self):
        with tempfile.TemporaryDirectory() as folder:
            olds = " ".join(os.path.join(folder, b, "device_throughput") for b in ("a", "b"))
            rows = self.run_script(folder, {"OLD": olds, "PASSES": "2"}, "--case x:1x1x1",
                                   "--case y:1x1x1")
        self.assertEqual([(r["pass"], r["case"], r["binary"], r["min_us"]) for r in rows], [
            (p, f"--case {c}:1x1x1", b, us)
            for c in ("x", "y") for p in ("1", "2")
            for b, us in (("new", "100.0"), ("a", "200.0"), ("b", "300.0"))
        ])
        self.assertTrue(all(r["kernel"] == "fusedgemm_kernel" for r in rows))

    def test_one_old_build_is_named_old(self):
        with tempfile.TemporaryDirectory() as folder:
            rows = self.run_script(folder, {"OLD": os.path.join(folder, "a", "device_throughput"),
                                            "PASSES": "1"}, "--case x:1x1x1")
        self.assertEqual([(r["binary"], r["median_us"]) for r in rows],
                         [("new", "101.0"), ("old", "201.0")])


if __name__ == "__main__":
    unittest.main()
