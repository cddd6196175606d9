#!/usr/bin/env python3
"""Validate every outermost friendly loop of some programs on one backend and tabulate.

    tools/validate_sweep.py [--ww BIN] [--backend cpu|cuda] [--json OUT] SPEC...

SPEC is `FILE.c[:ARG,ARG...][@FLAG,FLAG...]` (program arguments after `:`, C flags such
as `-DMINI` after `@`). For each loop: `warpwise validate --loop ID --backend B`; the row
says pass / FAIL (the program's numbers differ) / refused (exit 2, first reason) and the
kernel time the GPU backend measured. Used to check the CUDA path on a GPU machine, where
`cargo` may be missing: only the `warpwise` binary is needed.
"""

import argparse
import json
import re
import subprocess
import sys
import time


def parse_spec(spec):
    flags = []
    if "@" in spec:
        spec, f = spec.split("@", 1)
        flags = [x for x in f.split(",") if x]
    args = []
    if ":" in spec:
        spec, a = spec.split(":", 1)
        args = [x for x in a.split(",") if x]
    return spec, args, flags


def outermost_friendly(ww, path, flags):
    out = subprocess.run([ww, "analyze", path, *flags, "--format", "json"],
                         capture_output=True, text=True, timeout=600)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"analyze {path}: exit {out.returncode}\n{out.stderr[-2000:]}")
    loops = json.loads(out.stdout)["loops"]
    friendly = [l for l in loops if l["verdict"] == "friendly"]
    inner = set()
    for l in friendly:
        inner.update(x for x in l.get("nest", [])[1:])
    return [l["id"] for l in friendly if l["id"] not in inner]


def validate(ww, path, loop, backend, args, flags, timeout):
    cmd = [ww, "validate", path, *flags, "--loop", loop, "--backend", backend, "--", *args]
    start = time.time()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"loop": loop, "result": "timeout", "why": f"over {timeout} s"}
    text = out.stdout + out.stderr
    row = {"loop": loop, "exit": out.returncode, "seconds": round(time.time() - start, 2)}
    if out.returncode == 0:
        row["result"] = "pass"
    elif out.returncode == 1:
        row["result"] = "FAIL"
    else:
        row["result"] = "refused"
    m = re.search(r"kernel time: ([0-9.]+) ms", text)
    if m:
        row["kernel_ms"] = float(m.group(1))
    m = re.search(r"recommended mapping measured [^\n]*", text)
    if m:
        row["mappings"] = m.group(0)
    if out.returncode != 0:
        lines = [l for l in text.splitlines() if l.strip() and not l.startswith("warpwise: analysing")]
        row["why"] = " | ".join(lines[:4])[:400]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ww", default="target/release/warpwise")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("specs", nargs="+")
    opts = ap.parse_args()
    rows = []
    for spec in opts.specs:
        path, args, flags = parse_spec(spec)
        try:
            loops = outermost_friendly(opts.ww, path, flags)
        except Exception as e:  # one broken program must not hide the others' rows
            rows.append({"loop": path, "result": "error", "why": str(e)[:400]})
            continue
        for loop in loops:
            row = validate(opts.ww, path, loop, opts.backend, args, flags, opts.timeout)
            row["flags"] = flags
            rows.append(row)
            ms = f"{row['kernel_ms']:.4f} ms" if "kernel_ms" in row else ""
            print(f"{row['result']:8} {loop:55} {ms:14} {row.get('why', '')}", flush=True)
    counts = {}
    for r in rows:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    print("total:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if counts.get("FAIL") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
