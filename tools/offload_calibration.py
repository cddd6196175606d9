#!/usr/bin/env python3
"""The offload estimate against a real GPU: estimated and measured kernel time per loop.

    tools/offload_calibration.py [--ww BIN] [--gpu NAME] [--backend cuda] [--json OUT] SPEC...

SPEC is `FILE.c[:ARG,...][@FLAG,...]` as in validate_sweep.py. For each program: a counting
profile (`warpwise profile --loops none`), the report, `warpwise instantiate --gpu NAME
--launch-us 0` (the estimate's kernel time is then the bytes one launch moves over the
GPU's bandwidth, comparable with a kernel timed by CUDA events), and for every friendly loop with
an estimate `warpwise validate --backend B` (the kernel timed on the GPU, median of 5
launches, on the loop's first entry). Rows: loop, CPU ms per entry, estimated and measured
kernel ms, measured / estimated.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from validate_sweep import parse_spec


def run(cmd, timeout=900):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ww", default="target/release/warpwise")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--json")
    ap.add_argument("specs", nargs="+")
    opts = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ww-calibration-") as tmp:
        for spec in opts.specs:
            path, args, flags = parse_spec(spec)
            stem = os.path.join(tmp, os.path.basename(path))
            prof = run([opts.ww, "profile", path, *flags, "--loops", "none", "--fresh",
                        "-o", stem + ".profile.yaml", "--", *args])
            if prof.returncode != 0:
                rows.append({"loop": path, "why": "profile failed: " + prof.stderr[-300:]})
                continue
            rep = run([opts.ww, "analyze", path, *flags, "--format", "yaml", "-o", stem + ".yaml"])
            if rep.returncode not in (0, 1):
                rows.append({"loop": path, "why": "analyze failed: " + rep.stderr[-300:]})
                continue
            inst = run([opts.ww, "instantiate", stem + ".yaml", "--profile", stem + ".profile.yaml",
                        "--gpu", opts.gpu, "--launch-us", "0", "--format", "json"])
            if inst.returncode not in (0, 1):
                rows.append({"loop": path, "why": "instantiate failed: " + inst.stderr[-300:]})
                continue
            for loop in json.loads(inst.stdout)["loops"]:
                off = loop.get("offload")
                if loop.get("verdict") != "friendly" or not isinstance(off, dict):
                    continue
                row = {
                    "loop": loop["id"],
                    "cpu_ms": off["cpu_ns"] / 1e6,
                    "est_kernel_ms": off["kernel_ns"] / 1e6,
                    "est_transfer_ms": off["transfer_ns"] / 1e6,
                    "kernel_bytes": off["kernel_bytes"],
                    "entries": off["entries"],
                }
                val = run([opts.ww, "validate", path, *flags, "--loop", loop["id"],
                           "--backend", opts.backend, "--", *args])
                text = val.stdout + val.stderr
                m = re.search(r"kernel time: ([0-9.]+) ms", text)
                row["validated"] = {0: "pass", 1: "FAIL"}.get(val.returncode, "refused")
                if m:
                    row["measured_kernel_ms"] = float(m.group(1))
                    if row["est_kernel_ms"] > 0:
                        row["measured_over_estimate"] = row["measured_kernel_ms"] / row["est_kernel_ms"]
                elif val.returncode not in (0, 1):
                    row["why"] = " ".join(l for l in text.splitlines() if l.startswith("error"))[:300]
                rows.append(row)
    print(f"{'loop':48} {'cpu ms':>9} {'est ms':>9} {'GPU ms':>9} {'GPU/est':>8}  result")
    for r in rows:
        def f(k):
            return f"{r[k]:9.4f}" if k in r else f"{'-':>9}"
        ratio = f"{r['measured_over_estimate']:8.2f}" if "measured_over_estimate" in r else f"{'-':>8}"
        print(f"{r['loop']:48} {f('cpu_ms')} {f('est_kernel_ms')} {f('measured_kernel_ms')} {ratio}  "
              f"{r.get('validated', '')} {r.get('why', '')}")
    if opts.json:
        with open(opts.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
