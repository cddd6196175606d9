#!/usr/bin/env python3
"""Port whole real applications with `warpwise emit --target openmp` and run their own checks.

For each application nobody here wrote, in its sequential version (the authors' OpenMP
pragmas removed), this
  (a) builds and runs the original and checks its own verification,
  (b) runs `warpwise emit --target openmp` over all of the program's files into a fresh
      directory (every friendly outermost loop) and counts ported and refused loops,
      with the reasons of the refusals, and the loops that run on the device inside the
      target region of a ported loop that calls their function,
  (c) builds the ported program with clang-16's host offloading and runs it under
      `OMP_TARGET_OFFLOAD=MANDATORY` (a separate device data environment, so a wrong
      `map` gives wrong results as on a GPU), with a timeout, checking the same
      verification (or comparing what it prints with the original's),
  (d) prints one line per application and, with `--json FILE`, writes the table; with
      `--evaluation`, writes it into docs/evaluation.md (the block this command owns).

    python3 tools/realports.py prepare --npb NPB3.0-omp-C --xsbench XSBench --rsbench RSBench
    python3 tools/realports.py run [--ww target/debug/warpwise] [--json out.json] [--evaluation] [APP...]

`prepare` copies the sources (the NAS Parallel Benchmarks 3.0 OpenMP C versions, and the
`openmp-threading` directories of ANL-CESAR's XSBench and RSBench, unpacked where the
options say) into $WARPWISE_REALPORTS (default ~/.cache/warpwise-realports/apps), strips
their OpenMP pragmas and generates NPB's class S `npbparams.h`; nothing is ever written
into the repository. `run` measures; `--keep` leaves each port's directory in place.
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.environ.get("WARPWISE_REALPORTS",
                      os.path.expanduser("~/.cache/warpwise-realports/apps"))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OFFLOAD = ["-fopenmp", "-fopenmp-version=51", "-fopenmp-targets=x86_64-pc-linux-gnu"]
NPB_COMMON = ["../common/c_print_results.c", "../common/c_randdp.c", "../common/c_timers.c",
              "../common/wtime.c"]


def npb(name, extra=()):
    """An NPB benchmark: its own file(s) and the common ones, class S, which prints
    "VERIFICATION SUCCESSFUL" when its results match the reference values."""
    d = name.upper()
    return {"dir": f"npb/{d}", "tree": "npb", "files": [f"{name}.c", *extra, *NPB_COMMON],
            "flags": ["-I", "../common", "-I", "."], "libs": ["-lm"], "args": [],
            "expect": r"Verification\s*=\s*SUCCESSFUL"}


# XSBench and RSBench verify a hash against the value of their default (long) problem; a
# smaller problem is checked by comparing its hash with the original build's (they exit 1
# when the hash is not the default problem's, hence `status`). RSBench calls the OpenMP
# runtime's thread-count functions unconditionally: its original links libomp too. IS is
# K&R C (`ccflags`: what only the compiler is told).
APPS = {
    "bt": npb("bt"), "cg": npb("cg"), "ep": npb("ep"), "ft": npb("ft"), "is": dict(npb("is"), files=["is.c", *(f for f in NPB_COMMON if "randdp" not in f)], ccflags=["-Wno-implicit-int",
                                    "-Wno-implicit-function-declaration"]),
    "lu": npb("lu"), "mg": npb("mg"), "sp": npb("sp"),
    "xsbench": {"dir": "xsbench", "files": ["Main.c", "io.c", "Simulation.c", "GridInit.c",
                                            "XSutils.c", "Materials.c"],
                "flags": [], "libs": ["-lm"],
                "args": ["-s", "small", "-m", "event", "-l", "200000"], "status": (0, 1),
                "compare": r"Verification checksum: (\d+)"},
    "rsbench": {"dir": "rsbench", "files": ["main.c", "io.c", "init.c", "material.c",
                                            "simulation.c", "utils.c"],
                "flags": [], "libs": ["-lm", "-fopenmp"],
                "args": ["-s", "small", "-m", "event", "-l", "20000"], "status": (0, 1),
                "compare": r"Verification checksum: (\d+)"},
}


def strip_pragmas(text):
    """The sequential program: every `#pragma omp` line (with its continuations) dropped,
    and RSBench's unconditional `#define OPENMP` with it."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if skipping or re.match(r"\s*#\s*pragma\s+omp\b", line):
            skipping = line.rstrip().endswith("\\")
            out.append("\n")
            continue
        if re.match(r"\s*#\s*define\s+OPENMP\s*$", line):
            out.append("\n")
            continue
        out.append(line)
    return "".join(out)


def copy_stripped(src, dst):
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        p = os.path.join(src, f)
        if os.path.isfile(p) and (f.endswith(".c") or f.endswith(".h")):
            with open(p, errors="replace") as i, open(os.path.join(dst, f), "w") as o:
                o.write(strip_pragmas(i.read()))


def prepare(args):
    os.makedirs(ROOT, exist_ok=True)
    if args.npb:
        src = os.path.abspath(args.npb)
        dst = os.path.join(ROOT, "npb")
        shutil.rmtree(dst, ignore_errors=True)
        for d in ("BT", "CG", "EP", "FT", "IS", "LU", "MG", "SP", "common"):
            copy_stripped(os.path.join(src, d), os.path.join(dst, d))
        shutil.copytree(os.path.join(src, "sys"), os.path.join(dst, "sys"))
        os.makedirs(os.path.join(dst, "config"), exist_ok=True)
        with open(os.path.join(dst, "config", "make.def"), "w") as f:
            f.write("CC = cc\nCLINK = cc\nC_LIB = -lm\nC_INC = -I../common\nCFLAGS = -O2\n"
                    "CLINKFLAGS = -O2\nRAND = randdp\n")
        subprocess.run(["cc", "-o", "setparams", "setparams.c"], cwd=os.path.join(dst, "sys"),
                       check=True)
        for d in ("BT", "CG", "EP", "FT", "IS", "LU", "MG", "SP"):
            subprocess.run(["../sys/setparams", d.lower(), "S"], cwd=os.path.join(dst, d),
                           check=True, capture_output=True)
    for opt, name in ((args.xsbench, "xsbench"), (args.rsbench, "rsbench")):
        if opt:
            dst = os.path.join(ROOT, name)
            shutil.rmtree(dst, ignore_errors=True)
            copy_stripped(os.path.join(os.path.abspath(opt), "openmp-threading"), dst)
    print(f"prepared under {ROOT}")


def execute(cmd, cwd, timeout, env=None):
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                           env=env, errors="replace")
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b""
        return "timeout", out.decode(errors="replace") if isinstance(out, bytes) else out


def verdict(app, output, reference):
    """Whether a run passed the application's own check: its verification line, or the
    value the `compare` pattern extracts equal to the original's."""
    if "expect" in app:
        return re.search(app["expect"], output) is not None
    m = re.search(app["compare"], output)
    return m is not None and reference is not None and m.group(1) == reference


def first_error(text):
    """The line that says what went wrong first: an undefined symbol, a compiler error,
    a failure of the runtime."""
    lines = text.splitlines()
    for pattern in ("undefined reference", "error:", "error", "fail"):
        for line in lines:
            if pattern in line.lower():
                return line.strip()[:240]
    return text.strip().splitlines()[-1][:240] if text.strip() else ""


def measure(name, app, ww, timeout, keep):
    cwd = os.path.join(ROOT, app["dir"])
    row = {"app": name, "files": len(app["files"])}
    tmp = tempfile.mkdtemp(prefix=f"warpwise-realport-{name}-")
    orig = os.path.join(tmp, "original")
    ccflags = app.get("ccflags", [])
    status = app.get("status", (0,))
    rc, out = execute(["clang-16", "-O2", "-w", *ccflags, *app["flags"], *app["files"], "-o", orig,
                       *app["libs"]], cwd, 600)
    reference = None
    if rc == 0:
        rc, out = execute([orig, *app["args"]], cwd, timeout)
        m = re.search(app.get("compare", "$^"), out)
        reference = m.group(1) if m else None
        row["original_passes"] = rc in status and (verdict(app, out, reference) if "expect" in app
                                              else reference is not None)
    else:
        row["original_passes"] = False
        row["original_error"] = first_error(out)
    # (b) every friendly outermost loop of all the files, one `emit` for the whole program.
    port = os.path.join(tmp, "port")
    rc, out = execute([ww, "emit", "--target", "openmp", *app["files"], *app["flags"], "-o",
                       port], cwd, 1800)
    lines = out.splitlines()
    ported = [l.split()[1] for l in lines if l.startswith("ported ")]
    refused = [l[len("not ported "):] for l in lines if l.startswith("not ported ")]
    # A friendly loop of a function a ported loop calls runs inside that loop's target
    # region: on the device, not a target region of its own.
    inside = [l.split()[3] for l in lines if l.startswith("on the device ")]
    row.update(friendly=len(ported) + len(inside) + len(refused), ported=len(ported),
               inside=len(inside), refused=refused)
    if rc not in (0, 1) and not ported:
        row["emit_error"] = first_error(out)
    # (c) the port: a copy of the application's tree (`tree`: NPB's benchmarks share
    # ../common) with the ported files over the originals.
    tree = app.get("tree", app["dir"])
    shutil.copytree(os.path.join(ROOT, tree), os.path.join(tmp, "build"))
    build = os.path.join(tmp, "build", os.path.relpath(app["dir"], tree))
    if os.path.isdir(port):
        for f in os.listdir(port):
            if f.endswith(".c") or f.endswith(".h"):
                src = next((g for g in app["files"] if os.path.basename(g) == f), f)
                shutil.copyfile(os.path.join(port, f), os.path.join(build, src))
    exe = os.path.join(tmp, "ported")
    rc, out = execute(["clang-16", "-O2", "-w", *ccflags, *OFFLOAD, *app["flags"], *app["files"], "-o",
                       exe, *app["libs"]], build, 900)
    row["compiles"] = rc == 0
    if rc != 0:
        row["first_error"] = first_error(out)
        row["passes"] = False
    else:
        env = dict(os.environ, OMP_TARGET_OFFLOAD="MANDATORY")
        rc, out = execute([exe, *app["args"]], build, timeout, env)
        row["passes"] = rc in status and verdict(app, out, reference)
        if not row["passes"]:
            row["first_error"] = (f"exit {rc}: " if rc not in status else "check failed: ") + \
                first_error(out)
    if keep:
        row["dir"] = tmp
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return row


def run(args):
    ww = os.path.abspath(args.ww)
    names = args.apps or list(APPS)
    unknown = [n for n in names if n not in APPS]
    if unknown:
        sys.exit(f"unknown application(s): {' '.join(unknown)}; known: {' '.join(APPS)}")
    rows = []
    print(f"{'app':9} {'files':>5} {'orig':>5} {'friendly':>8} {'ported':>6} {'inside':>6} "
          f"{'refused':>7} {'compiles':>8} {'passes':>6}")
    for name in names:
        row = measure(name, APPS[name], ww, args.timeout, args.keep)
        rows.append(row)
        print(f"{name:9} {row['files']:5} {'yes' if row['original_passes'] else 'NO':>5} "
              f"{row['friendly']:8} {row['ported']:6} {row['inside']:6} {len(row['refused']):7} "
              f"{'yes' if row['compiles'] else 'NO':>8} {'yes' if row['passes'] else 'NO':>6}",
              flush=True)
        for r in row["refused"]:
            print(f"    refused {r[:300]}")
        for key in ("original_error", "emit_error", "first_error"):
            if key in row:
                print(f"    {key}: {row[key]}")
        if "dir" in row:
            print(f"    kept in {row['dir']}")
    friendly = sum(r["friendly"] for r in rows)
    ported = sum(r["ported"] for r in rows)
    inside = sum(r["inside"] for r in rows)
    passes = sum(r["passes"] for r in rows)
    print(f"TOTAL {len(rows)} applications: {passes} pass their check after the port; "
          f"friendly outermost loops {friendly}, ported {ported}, inside another port's "
          f"target region {inside}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.evaluation:
        version = subprocess.run([ww, "--version"], capture_output=True,
                                 text=True).stdout.strip()
        build = "release" if os.sep + "release" + os.sep in ww else "debug"
        write_block(ports_block(rows, f"{version} ({build} build)"))


EVALUATION_PAGE = os.path.join(REPO, "docs", "evaluation.md")
PORTS_START = "<!-- whole-program-ports: generated by `python3 tools/realports.py run --evaluation` -->"
PORTS_END = "<!-- end of whole-program-ports -->"


def ports_block(rows, version):
    """docs/evaluation.md's table of whole programs ported, from one `run`."""
    import datetime
    friendly = sum(r["friendly"] for r in rows)
    on_device = sum(r["ported"] + r["inside"] for r in rows)
    passes = sum(r["passes"] for r in rows)
    out = [PORTS_START, "## Whole programs ported", "",
           f"Measured on {datetime.date.today().isoformat()} by `python3 tools/realports.py run "
           f"--evaluation` with {version}: the sequential "
           "versions (OpenMP pragmas removed) of applications nobody here wrote that check "
           "their own results, each ported whole by one `warpwise emit --target openmp` over "
           "all its files, built with clang-16's OpenMP offloading to the host and run with "
           "`OMP_TARGET_OFFLOAD=MANDATORY` (a separate device data environment: a wrong `map` "
           "gives wrong results, as on a GPU). *Friendly* counts the outermost friendly "
           "loops; *inside* those a ported loop calls, which run in its target region; "
           "every refusal is listed with its reason by the command. No GPU was used.", "",
           "| application | files | friendly | ported | inside | refused | compiles | passes its own check |",
           "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        out.append(f"| {r['app']} | {r['files']} | {r['friendly']} | {r['ported']} | "
                   f"{r['inside']} | {len(r['refused'])} | {'yes' if r['compiles'] else 'no'} | "
                   f"{'yes' if r['passes'] else '**no**'} |")
    share = 100.0 * on_device / friendly if friendly else 0.0
    out += ["", f"{passes} of {len(rows)} programs pass their own check after the port; "
            f"{on_device} of {friendly} friendly outermost loops ({share:.1f}%) run on the "
            "device.", "", PORTS_END]
    return "\n".join(out) + "\n"


def write_block(block):
    """Replaces docs/evaluation.md's whole-program block; `tools/realapps.py report` keeps
    it when it rewrites the page."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.dont_write_bytecode = True  # no __pycache__ in the repository
    import pathological
    pathological.write_block(EVALUATION_PAGE, PORTS_START, PORTS_END, block)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--npb", help="an unpacked NPB3.0-omp-C")
    p.add_argument("--xsbench", help="an unpacked ANL-CESAR/XSBench")
    p.add_argument("--rsbench", help="an unpacked ANL-CESAR/RSBench")
    r = sub.add_parser("run")
    default = os.path.join(REPO, "target", "release", "warpwise")
    if not os.path.exists(default):
        default = os.path.join(REPO, "target", "debug", "warpwise")
    r.add_argument("--ww", default=default)
    r.add_argument("--json")
    r.add_argument("--timeout", type=int, default=300, help="seconds per run")
    r.add_argument("--keep", action="store_true")
    r.add_argument("--evaluation", action="store_true",
                   help="write the table into docs/evaluation.md (its whole-program block)")
    r.add_argument("apps", nargs="*", metavar="APP", help=" ".join(APPS))
    args = ap.parse_args()
    {"prepare": prepare, "run": run}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
