#!/usr/bin/env python3
"""Time warpwise on code shapes that make analysers blow up, next to `gcc -O2 -c`.

    python3 tools/pathological.py [DIR]   # writes the files to DIR (default: a temp dir)
    python3 tools/pathological.py --check [--ww BIN]   # CI's guard: warpwise alone, with limits

`python3 tools/realapps.py report` runs the same cases for docs/evaluation.md.

Each case is one generated C file: a loop body of 1,000 / 2,000 statements, an else-if chain
of 500 branches, a 5,000-case switch, 1,000 and 10,000 loops in a row, 120 and 300 loops in
a row each around an inner loop and a store through an index, one line holding a
loop body of 10,000 / 40,000 statements, 100 nested loops, sums of 5,000
and 20,000 terms, 1,000 nested ifs and 2,000 nested `?:` in parentheses (these two are
refused by the parser's nesting limit with one diagnostic), 1,000 `?:` nested without
parentheses, a macro expanding to 131,072 tokens on one line, and 2,000 functions of five
loops each. `WW` names the warpwise binary (default: the
release build). Prints wall time and peak memory of each and gcc's CPU time; a run is
stopped after 300 s.
Standard library only; needs `gcc` and GNU `time` (/usr/bin/time).

`--check` is the guard `.ci/run` runs after the tests, with the build the tests made
(`target/debug/warpwise`, opt-level 1): it runs warpwise alone on every case and fails
if one takes more than CHECK_SECONDS, more than CHECK_KIB of memory, or exits otherwise
than expected (0; 1 for the two cases the nesting limit refuses). The limits are
twice the release build's targets in time (the tests' build is up to 2x slower than
release) and the target itself in memory: a super-linear path in the analysis shows as a
case far over them.
"""
import os
import signal
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cases():
    for n in (1000, 2000):
        body = "\n".join(f"    a[i] = a[i] * 1.0001 + b[i + {k % 7}];" for k in range(n))
        yield f"body{n}", (f"void f(double *a, const double *b, int n) {{\n"
                           f"  for (int i = 0; i < n; i++) {{\n{body}\n  }}\n}}\n")
    chain = "\n".join(f"    else if (c[i] == {k}) a[i] = {k};" for k in range(1, 500))
    yield "elseif500", (f"void f(double *a, const int *c, int n) {{\n  for (int i = 0; i < n; i++) {{\n"
                        f"    if (c[i] == 0) a[i] = 0;\n{chain}\n  }}\n}}\n")
    cases_ = "\n".join(f"    case {k}: a[i] = {k}; break;" for k in range(5000))
    yield "switch5000", (f"void f(double *a, const int *c, int n) {{\n  for (int i = 0; i < n; i++) {{\n"
                         f"   switch (c[i]) {{\n{cases_}\n    }}\n  }}\n}}\n")
    for n in (1000, 10000):
        loops = "\n".join(f"  for (int i{k} = 0; i{k} < n; i{k}++) a[i{k}] += {k};" for k in range(n))
        yield f"loops{n}", f"void f(double *a, int n) {{\n{loops}\n}}\n"
    # Loops in a row, each around an inner loop and ending with a store through an index
    # (queries that walk the dominator chain per loop make this quartic).
    for n in (120, 300):
        loops = "\n".join(f"  for (int i{k} = 0; i{k} < n; i{k}++) {{\n"
                          f"    for (int j = 0; j < n; j++) b[j] = b[j] + a[i{k}];\n"
                          f"    a[idx[i{k}]] = {k};\n  }}" for k in range(n))
        yield f"nested_rows{n}", (f"void f(double *a, double *b, const int *idx, int n) {{\n"
                                  f"{loops}\n}}\n")
    # One long line: a loop body of `a[i] += b[i + k];` statements (generated code can put
    # hundreds of thousands of them on one line).
    for n in (10000, 40000):
        body = " ".join(f"a[i] += b[i + {k % 7}];" for k in range(n))
        yield f"line{n}", (f"void f(double *a, const double *b, int n) {{ "
                           f"for (int i = 0; i < n; i++) {{ {body} }} }}\n")
    opens = "".join(f"for (int i{k} = 0; i{k} < 2; i{k}++) " for k in range(100))
    yield "nest100", f"void f(double *a) {{\n  {opens} a[i99] += 1;\n}}\n"
    for n in (5000, 20000):
        s = " + ".join(f"b[i + {k % 13}]" for k in range(n))
        yield f"sum{n}", (f"void f(double *a, const double *b, int n) {{\n"
                          f"  for (int i = 0; i < n; i++) a[i] = {s};\n}}\n")
    ifs = "".join(f"if (c[i] > {k}) {{ " for k in range(1000)) + "a[i] = 1;" + "}" * 1000
    yield "ifs1000", f"void f(double *a, const int *c, int n) {{\n  for (int i = 0; i < n; i++) {{ {ifs} }}\n}}\n"
    e = "0"
    for k in range(2000):
        e = f"(c[i] == {k} ? {k} : {e})"
    yield "ternary2000", f"void f(double *a, const int *c, int n) {{\n  for (int i = 0; i < n; i++) a[i] = {e};\n}}\n"
    # 1,000 `?:` nested without parentheses (under the parser's nesting limit), in a loop.
    chain = "c[i] ? " * 1000 + "1" + " : 0" * 1000
    yield "cond1000", f"void f(int *a, const int *c, int n) {{\n  for (int i = 0; i < n; i++) a[i] = {chain};\n}}\n"
    # A macro expanding to 131,072 tokens on one line (source mapping aligns the line).
    defs = ["#define X0 a[i] += 1;"] + [f"#define X{d} X{d - 1} X{d - 1}" for d in range(1, 15)]
    yield "macro2e17", ("\n".join(defs) + "\nvoid f(double *a, int n) "
                        "{ for (int i = 0; i < n; i++) { X14 } }\n")
    # 2,000 functions of five loops each (per-function work must not scan the whole file).
    funcs = "".join(f"void f{k}(double *a, int n) {{\n" + "".join(
        f"  for (int i = 0; i < n; i++) a[i] += {j};\n" for j in range(5)) + "}\n"
        for k in range(2000))
    yield "functions2000", funcs


def timed(cmd, timeout=300):
    """(exit code, wall seconds, peak KiB, CPU seconds) of `cmd` under GNU time. Past
    `timeout` seconds it is stopped, with its children, and the exit code is "timeout"."""
    with tempfile.NamedTemporaryFile("r") as t:
        child = subprocess.Popen(["/usr/bin/time", "-f", "%e %M %U %S", "-o", t.name] + cmd,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 preexec_fn=os.setsid)
        try:
            rc = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return "timeout", float(timeout), 0, float(timeout)
        fields = t.read().split()
        return rc, float(fields[-4]), int(fields[-3]), float(fields[-2]) + float(fields[-1])


# Limits of `--check` (see the docstring) and the cases the parser refuses by design.
CHECK_SECONDS = 20.0
CHECK_KIB = 1024 * 1024
REFUSED = {"ifs1000", "ternary2000"}


def check(ww):
    """Run every case under the limits; print one line each; return the failures."""
    failures = []
    with tempfile.TemporaryDirectory(prefix="warpwise-patho-") as out:
        for name, text in cases():
            path = os.path.join(out, name + ".c")
            with open(path, "w") as f:
                f.write(text)
            report = path + ".json"
            rc, secs, kib, _ = timed([ww, "analyze", path, "--format", "json", "-o", report])
            expected = 1 if name in REFUSED else 0
            verdict = "ok"
            if rc != expected:
                verdict = f"exit {rc}, expected {expected}"
            elif secs > CHECK_SECONDS:
                verdict = f"{secs:.1f} s, over {CHECK_SECONDS:.0f} s"
            elif kib > CHECK_KIB:
                verdict = f"{kib // 1024} MB, over {CHECK_KIB // 1024} MB"
            elif expected == 0 and not os.path.getsize(report):
                verdict = "empty report"
            print(f"{name:<14} {secs:>7.2f}s {kib // 1024:>6} MB  {verdict}", flush=True)
            if verdict != "ok":
                failures.append(f"{name}: {verdict}")
    return failures


def main():
    if sys.argv[1:2] == ["--check"]:
        args = sys.argv[2:]
        ww = args[1] if args[:1] == ["--ww"] and len(args) == 2 else os.path.join(
            REPO, "target", "debug", "warpwise")
        failures = check(ww)
        for failure in failures:
            print(f"pathological: {failure}", file=sys.stderr)
        sys.exit(1 if failures else 0)
    ww = os.environ.get("WW", os.path.join(REPO, "target", "release", "warpwise"))
    out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="warpwise-patho-")
    os.makedirs(out, exist_ok=True)
    print(f"{'case':<12} {'warpwise':>10} {'memory':>9} {'exit':>5} {'gcc -O2 -c':>11}")
    for row in measure(ww, out):
        gcc = "stopped" if row["gcc_seconds"] is None else f"{row['gcc_seconds']:.2f}s"
        print(f"{row['case']:<12} {row['seconds']:>9.2f}s {row['kib'] // 1024:>6} MB "
              f"{row['exit']!s:>5} {gcc:>11}", flush=True)


def measure(ww, out, gcc_timeout=300):
    """Each case written to `out`, then timed: warpwise analyze (wall and CPU seconds, peak
    KiB, exit code) and gcc -O2 -c (CPU seconds, None when stopped after `gcc_timeout`
    seconds). Yields one dict per case as it is timed."""
    for name, text in cases():
        path = os.path.join(out, name + ".c")
        with open(path, "w") as f:
            f.write(text)
        rc, secs, kib, cpu = timed([ww, "analyze", path, "--format", "json", "-o", path + ".json"])
        gcc_rc, _, _, gcc = timed(["gcc", "-O2", "-c", path, "-o", path + ".o"], gcc_timeout)
        yield {"case": name, "seconds": secs, "cpu": cpu, "kib": kib, "exit": rc,
               "gcc_seconds": None if gcc_rc == "timeout" else gcc, "gcc_timeout": gcc_timeout,
               "expected_exit": 1 if name in REFUSED else 0}


if __name__ == "__main__":
    main()
