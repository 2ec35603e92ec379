#!/usr/bin/env python3
"""Plots of bench/device_throughput's CSV (docs/perf/device_throughput.csv) for docs/PERF.md:
fusedgemm and cuBLASLt TFLOP/s per case, and the ratio. Needs matplotlib (pip install
matplotlib); nothing in the build or the tests does.

Usage: scripts/plot_perf.py [CSV] [OUTPUT DIR] [DEVICE]
(DEVICE names the GPU in the titles: the CSV does not say; H100 by default.)
"""
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def label(row):
    return f"{row['case']} {row['m']}x{row['n']}x{row['k']}"


def bars(rows, title, path):
    names = [label(r) for r in rows]
    ours = [float(r["fusedgemm_tflops"]) for r in rows]
    theirs = [float(r["baseline_tflops"]) for r in rows]
    ratio = [float(r["ratio"]) for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 0.55 * len(rows)), 7), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    x = range(len(rows))
    top.bar([i - 0.2 for i in x], ours, width=0.4, label="fusedgemm")
    top.bar([i + 0.2 for i in x], theirs, width=0.4, label="cuBLASLt (best of 8 algorithms)")
    top.set_ylabel("TFLOP/s")
    top.set_title(title)
    top.legend()
    bottom.bar(list(x), ratio, color=["tab:green" if r >= 1 else "tab:red" for r in ratio])
    bottom.axhline(1.0, color="black", linewidth=0.8)
    bottom.set_ylabel("ratio")
    bottom.set_xticks(list(x))
    bottom.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    csv_path = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/perf/device_throughput.csv")
    out = Path(sys.argv[2] if len(sys.argv) > 2 else csv_path.parent)
    rows = load(csv_path)
    kinds = ("bf16", "bias+gelu_tanh", "gated_mlp", "gemm+row_amax", "fp8_e4m3")
    # The headline cases and, in a full run, the same cases again at its end, side by side.
    passes = {kind: i for i, kind in enumerate(kinds)}
    headline = [r for r in rows if r["case"].removesuffix(" (again)") in passes]
    headline.sort(key=lambda r: (passes[r["case"].removesuffix(" (again)")], int(r["m"]),
                                 int(r["n"]), r["case"].endswith("(again)")))
    # The variant rows of a few tiles at the squares (not the pick checks, the decode rows
    # or the K sweep).
    variants = [r for r in rows if r["case"] not in passes and r["case"] != "bf16 LLM"
                and not r["case"].endswith(" (again)") and not r["case"].startswith("bias")
                and not any(w in r["case"] for w in ("pick", "decode", "sweep", "K="))]
    llm = [r for r in rows if r["case"] == "bf16 LLM"]
    device = sys.argv[3] if len(sys.argv) > 3 else "H100"
    bars(headline, f"Squares and fused flavors vs cuBLASLt ({device})", out / "headline.png")
    bars(variants, f"Kernel variants at 2048^3-8192^3 ({device})", out / "variants.png")
    bars(llm, f"LLM shapes, bf16 ({device})", out / "llm_sweep.png")

if __name__ == "__main__":
    main()
