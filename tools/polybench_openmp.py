#!/usr/bin/env python3
"""OpenMP ports of the PolyBench/C 4.2.1 kernels validated under clang's host offloading:
for each kernel, `warpwise profile --loops all` at MINI, then
`warpwise validate --target openmp --profile` with `-DPOLYBENCH_DUMP_ARRAYS`, which builds
the original and the port and compares everything they print.

    python3 tools/polybench_openmp.py --ww target/release/warpwise POLYBENCH_DIR [KERNEL...]

POLYBENCH_DIR is an unpacked PolyBench/C 4.2.1 (utilities/ and the kernel directories); it
is never written. Prints one line per kernel (PASS/FAIL, loops ported, atomic updates, data
regions) and the totals. Needs clang-16 with libomp's offloading (docs/openmp-ports.md).
Standard library only.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def kernels(root):
    for d, _, files in sorted(os.walk(root)):
        if os.path.relpath(d, root).startswith("utilities"):
            continue
        for f in sorted(files):
            if f.endswith(".c"):
                yield os.path.join(d, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ww", default="target/release/warpwise")
    ap.add_argument("root")
    ap.add_argument("only", nargs="*")
    args = ap.parse_args()
    ww = os.path.abspath(args.ww)
    root = os.path.abspath(args.root)
    totals = {"kernels": 0, "pass": 0, "ported": 0, "regions": 0}
    with tempfile.TemporaryDirectory(prefix="warpwise-polybench-") as tmp:
        for c in kernels(root):
            name = os.path.basename(c)[:-2]
            if args.only and name not in args.only:
                continue
            common = [c, "utilities/polybench.c", "-I", "utilities", "-I", os.path.dirname(c),
                      "-D", "MINI_DATASET", "-D", "POLYBENCH_DUMP_ARRAYS", "-l", "m"]
            prof = os.path.join(tmp, name + ".yaml")
            subprocess.run([ww, "profile", "-q", *common, "--loops", "all", "--fresh",
                            "-o", prof], cwd=root, capture_output=True, text=True)
            run = subprocess.run([ww, "validate", "--target", "openmp", *common,
                                  "--profile", prof], cwd=root, capture_output=True, text=True)
            lines = run.stderr.splitlines() + run.stdout.splitlines()
            verdict = next((l for l in lines if l.startswith(("PASS", "FAIL"))), "no verdict")
            ported = sum(l.startswith("ported ") for l in lines)
            atomics = sum("atomic update`" in l for l in lines)
            regions = sum(l.startswith("data region") for l in lines)
            totals["kernels"] += 1
            totals["pass"] += verdict.startswith("PASS")
            totals["ported"] += ported
            totals["regions"] += regions
            print(f"{name:16} {verdict[:4]} ported {ported:2} atomic updates {atomics} "
                  f"data regions {regions}" + ("" if verdict.startswith("PASS") else
                                              f"\n    {verdict[:300]}"))
            sys.stdout.flush()
    print(f"TOTAL {totals['pass']} of {totals['kernels']} print the same; "
          f"{totals['ported']} loops ported, {totals['regions']} data regions")


if __name__ == "__main__":
    main()
