#!/usr/bin/env python3
"""Time warpwise on code shapes that make analysers blow up, next to `gcc -O2 -c`.

    python3 tools/pathological.py [DIR]   # writes the files to DIR (default: a temp dir)
    python3 tools/pathological.py --check [--ww BIN]   # CI's guard: warpwise alone, with limits
    python3 tools/pathological.py --curves [--ww BIN]  # growth from 1x to 10x, into docs

`python3 tools/realapps.py report` runs the same cases for docs/evaluation.md.

Each case is one generated C file: a loop body of 1,000 / 2,000 statements, an else-if chain
of 500 branches, a 5,000-case switch, 1,000 and 10,000 loops in a row, 120 and 300 loops in
a row each around an inner loop and a store through an index, one line holding a
loop body of 10,000 / 40,000 statements, 100 nested loops, sums of 5,000
and 20,000 terms, 1,000 nested ifs and 2,000 nested `?:` in parentheses (these two are
refused by the parser's nesting limit with one diagnostic), 1,000 `?:` nested without
parentheses, 2,000 nested without parentheses around an assignment, a macro expanding to
131,072 tokens on one line, another to 458,752 with an error on every statement, 2,000
functions of five loops each, declarators 20,000 levels deep in every position (refused
past 256 levels, each with one error) and a dereference chain at that limit, an expression
of 5 million terms in a loop body (over the function-body budget: exit 1) and one of a
million at file scope (over the same budget for a declaration: exit 1). `WW` names the
warpwise binary (default: the release build). Prints wall time and peak memory of each and gcc's CPU time; a run is
stopped after 300 s.
Standard library only; needs `gcc` and GNU `time` (/usr/bin/time).

`--check` is the guard `.ci/run` runs after the tests, with the build the tests made
(`target/debug/warpwise`, its analyses at opt-level 1): it runs warpwise on every case,
one case per core (up to four at a time; each analysis of one file is one process on one
core), and fails
if one takes more than CHECK_SECONDS, more than CHECK_KIB of memory, or exits otherwise
than expected (0; 1 for the cases a budget refuses, `REFUSED`); it also runs `instantiate`
on a report of 15,400 loops. The limits are
twice the release build's targets in time (the tests' build is up to 2x slower than
release) and the target itself in memory: a super-linear path in the analysis shows as a
case far over them.

`--curves` measures the shapes of `CURVES` at 1x, 2x, 4x and 10x of their base size (the
sizes found super-linear once) with the release build under `/usr/bin/time -v`: wall
seconds and peak RSS, the exit code, and the log-log slope from 1x to 10x (1 is linear;
n log n from 1x to 10x is about 1.1), then rewrites the block of docs/evaluation.md between
CURVES_START and CURVES_END (`tools/realapps.py report` keeps that block as it is).
"""
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

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
    yield "functions2000", functions(2000)
    # `x = c == 0 ? 0 : c == 1 ? 1 : ...` in a loop: each level's join carries the values of
    # the levels inside it (the dense analyses' joins were quadratic in the nesting).
    yield "cond_assign2000", cond_assign(2000)
    # A macro line of 458,752 tokens whose every statement is an error: the diagnostic
    # aligns the expanded line with the original.
    yield "macro_diag2e16", macro_diag(1 << 16)
    # Declarators 20,000 levels deep in every position: each refused with one error past
    # the 256-level limit, the file's other function analysed.
    yield "declarators20000", declarators(20000)
    # A dereference chain through a local at the limit: every level is a parameter of the
    # report, written with its type (the report grows with the square of the depth).
    yield "deref256", deref_chain(256)
    # One line: a 5-million-term expression of `+ * - /` in a loop body (over the body
    # budget: the function is left out with one error; memory stays proportional).
    yield "expr5e6", expression(5_000_000)
    # A file-scope initializer of a million terms: over the declaration budget (exit 1).
    yield "init1e6", (f"int x = {' + '.join(['1'] * 1_000_000)};\n"
                      "void f(int *a, int n) { for (int i = 0; i < n; i++) a[i] = x; }\n")


def functions(n):
    """`n` functions of five loops each."""
    return "".join(f"void f{k}(double *a, int n) {{\n" + "".join(
        f"  for (int i = 0; i < n; i++) a[i] += {j};\n" for j in range(5)) + "}\n"
        for k in range(n))


def cond_assign(n):
    """`x = c[i] == 0 ? 0 : c[i] == 1 ? 1 : ... : 0;` of `n` levels in a loop."""
    chain = "".join(f"c[i] == {k} ? {k} : " for k in range(n)) + "0"
    return (f"void f(int *a, const int *c, int n) {{\n  for (int i = 0; i < n; i++) {{\n"
            f"    int x;\n    x = {chain};\n    a[i] = x;\n  }}\n}}\n")


def macro_diag(statements):
    """A macro line of `statements` statements of seven tokens, each using an undeclared
    name (an error each), as copies of a doubling macro."""
    depth = min(16, statements.bit_length() - 1)
    defs = ["#define Y0 a[i] += zz;"] + [f"#define Y{d} Y{d - 1} Y{d - 1}" for d in range(1, depth + 1)]
    line = " ".join([f"Y{depth}"] * (statements >> depth))
    return "\n".join(defs) + f"\nvoid f(double *a, int n) {{ for (int i = 0; i < n; i++) {{ {line} }} }}\n"


def declarators(n):
    """Declarators `n` levels deep as a global, a typedef, a parameter, a function's return
    type, a cast, a `sizeof`, an array, a used local and nested function pointers (bracket
    nesting capped at 900, under the parser's limit), then one function that is fine."""
    stars = "*" * n
    fp = "fp"
    for _ in range(min(n, 900)):
        fp = f"(*{fp})()"
    return (f"int {stars}g;\ntypedef int {stars}T;\nvoid p(int {stars}q) {{ }}\n"
            f"int {stars}r(void) {{ return 0; }}\n"
            f"void *v; long c(void) {{ return (long)(int {stars})v; }}\n"
            f"unsigned long s(void) {{ return sizeof(int {stars}); }}\n"
            f"int arr{'[1]' * n};\nint {fp};\n"
            f"int u(int *a, int n) {{ int {stars}w = 0; for (int i = 0; i < n; i++) "
            f"a[i] = w ? {'*' * (n - 1)}w == 0 : 0; return 0; }}\n"
            "void ok(double *a, int n) { for (int i = 0; i < n; i++) a[i] = 0; }\n")


def deref_chain(n):
    """A local of `n` pointer levels read through all of them in a loop."""
    return (f"int f(int *a, int n) {{ int {'*' * n}p = 0; for (int i = 0; i < n; i++) "
            f"a[i] += p ? {'*' * n}p : 0; return 0; }}\n")


def expression(terms):
    """`x = a + a * a - a / a ...` of `terms` terms on one line, in a loop body."""
    ops = (" + a", " * a", " - a", " / a")
    body = "a" + "".join(ops[k % 4] for k in range(terms - 1))
    return ("void f(double *b, double a, int n) { double x; for (int i = 0; i < n; i++) "
            f"{{ x = {body}; b[i] = x; }} }}\n")


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
REFUSED = {"ifs1000", "ternary2000", "macro_diag2e16", "expr5e6", "init1e6"}
# The report `--check` gives `instantiate` (loops).
CHECK_REPORT_LOOPS = 15_400


def check_case(ww, out, name, text):
    """One case of `--check` under the limits: its printed line and its failure, if any."""
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
    line = f"{name:<16} {secs:>7.2f}s {kib // 1024:>6} MB  {verdict}"
    return line, (None if verdict == "ok" else f"{name}: {verdict}")


def check(ww):
    """Run every case under the limits; print one line each; return the failures. The
    cases run side by side, one per core (each analysis is one process on one core), and
    print in their order."""
    import concurrent.futures
    failures = []
    with tempfile.TemporaryDirectory(prefix="warpwise-patho-") as out:
        workers = max(1, min(4, os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            runs = [pool.submit(check_case, ww, out, name, text) for name, text in cases()]
            for run in runs:
                line, failure = run.result()
                print(line, flush=True)
                if failure:
                    failures.append(failure)
        name = f"instantiate{CHECK_REPORT_LOOPS}"
        report = os.path.join(out, name + ".json")
        write_report(ww, out, CHECK_REPORT_LOOPS, report)
        rc, secs, kib, _ = timed([ww, "instantiate", report, "--set", "n=1000",
                                  "-o", report + ".txt"])
        verdict = ("ok" if rc == 0 and secs <= CHECK_SECONDS and kib <= CHECK_KIB
                   else f"exit {rc}, {secs:.1f} s, {kib // 1024} MB")
        print(f"{name:<16} {secs:>7.2f}s {kib // 1024:>6} MB  {verdict}", flush=True)
        if verdict != "ok":
            failures.append(f"{name}: {verdict}")
    return failures


def write_report(ww, out, loops, path):
    """A JSON kernel report of `loops` loops (a multiple of five) at `path`: the five loops
    `ww analyze` reports for a function of five loops, repeated with their ids, lines and
    function renamed, written as it is made (a 10x report is 770 MB)."""
    source = os.path.join(out, "five.c")
    with open(source, "w") as f:
        f.write(functions(1))
    subprocess.run([ww, "analyze", source, "--format", "json", "-o", source + ".json"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import json
    with open(source + ".json") as f:
        base = json.load(f)
    templates = [json.dumps(loop) for loop in base["loops"]]
    with open(path, "w") as f:
        f.write('{"schema": %s, "loops": [\n' % json.dumps(base["schema"]))
        for k in range(loops // len(templates)):
            for j, text in enumerate(templates):
                line = 2 + 7 * k + j
                loop = (text.replace(f'"five.c:{2 + j}:3"', f'"gen.c:{line}:3"')
                        .replace('"function": "f0"', f'"function": "f{k}"')
                        .replace(f'"line": {2 + j},', f'"line": {line},', 1))
                f.write(("" if k == 0 and j == 0 else ",\n") + loop)
        f.write("\n]}\n")


# The shapes `--curves` measures: name, what it is, base size (1x), its unit, and how to make
# the case at a size: (source text, or None for a report) and the command's arguments
# after the binary.
CURVES = [
    ("cond_assign", "`x = c == 0 ? 0 : c == 1 ? 1 : ...;` nested without parentheses in a loop",
     10_000, "levels"),
    ("declarators", "declarators in every position (global, typedef, parameter, return, cast, "
     "`sizeof`, array, used local, function pointers)", 20_000, "levels"),
    ("expression", "one line `x = a + a * a - a / a ...;` in a loop body", 5_000_000, "terms"),
    ("macro_diag", "a macro line of 7-token statements, each an error", 1 << 16, "statements"),
    ("functions", "functions of five loops each", 2_000, "functions"),
    ("report", "`instantiate` on a JSON report", 77_000, "loops"),
]
SCALES = (1, 2, 4, 10)
# A run of `--curves` is stopped after this many seconds.
CURVES_TIMEOUT = 300
CURVES_PAGE = os.path.join(REPO, "docs", "evaluation.md")
CURVES_START = "<!-- scaling-curves: generated by `python3 tools/pathological.py --curves` -->"
CURVES_END = "<!-- end of scaling-curves -->"


def curve_case(name, n):
    """The source text of shape `name` at size `n` (None for `report`)."""
    return {"cond_assign": lambda: cond_assign(n), "declarators": lambda: declarators(n),
            "expression": lambda: expression(n), "macro_diag": lambda: macro_diag(n),
            "functions": lambda: functions(n), "report": lambda: None}[name]()


def timed_verbose(cmd, timeout):
    """(exit code or "stopped", wall seconds, peak KiB) of `cmd` under `/usr/bin/time -v`."""
    with tempfile.NamedTemporaryFile("r") as t:
        started = time.monotonic()
        child = subprocess.Popen(["/usr/bin/time", "-v", "-o", t.name] + cmd,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 preexec_fn=os.setsid)
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return "stopped", time.monotonic() - started, 0
        fields = {}
        for line in t.read().splitlines():
            key, _, value = line.strip().rpartition(": ")
            fields[key] = value
        clock = fields.get("Elapsed (wall clock) time (h:mm:ss or m:ss)", "0:0")
        wall = 0.0
        for part in clock.split(":"):
            wall = wall * 60 + float(part)
        return (int(fields.get("Exit status", "-1")), wall,
                int(fields.get("Maximum resident set size (kbytes)", "0")))


def slope(a, b, scale):
    """The log-log slope from `a` at 1x to `b` at `scale`, or None."""
    if not a or not b or a <= 0 or b <= 0:
        return None
    return math.log(b / a) / math.log(scale)


def curves(ww):
    """Every shape of CURVES at every scale: rows of (shape, scale, n, exit, wall s, KiB)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="warpwise-curves-") as out:
        for name, _, base, _ in CURVES:
            for scale in SCALES:
                n = base * scale
                path = os.path.join(out, f"{name}{n}")
                text = curve_case(name, n)
                if text is None:
                    write_report(ww, out, n, path + ".json")
                    cmd = [ww, "instantiate", path + ".json", "--set", "n=1000",
                           "-o", path + ".txt"]
                else:
                    with open(path + ".c", "w") as f:
                        f.write(text)
                    cmd = [ww, "analyze", path + ".c", "--format", "json", "-o", path + ".json"]
                rc, wall, kib = timed_verbose(cmd, CURVES_TIMEOUT)
                for leftover in (path + ".c", path + ".json", path + ".txt"):
                    if os.path.exists(leftover):
                        os.unlink(leftover)
                rows.append({"shape": name, "scale": scale, "n": n, "exit": rc,
                             "wall": wall, "kib": kib})
                print(f"{name:<12} {scale:>3}x {n:>10} exit {rc!s:>7} {wall:>8.2f} s "
                      f"{kib // 1024:>6} MiB", flush=True)
    return rows


def curves_block(rows, facts):
    """The Markdown of docs/evaluation.md's scaling section."""
    out = [CURVES_START, "## Growth with input size", "",
           f"Measured on {facts['date']} by `python3 tools/pathological.py --curves` with the "
           f"release build ({facts['version']}; {facts['cores']} CPU cores, shared): each shape "
           "at 1x, 2x, 4x and 10x of the size once found super-linear, run alone under "
           f"`/usr/bin/time -v` (wall seconds, peak RSS), stopped after {CURVES_TIMEOUT} s. "
           "The slope is log(10x / 1x) / log(10): 1 is linear, n log n over 1x to 10x is "
           "about 1.1, 2 is quadratic; where the exit at 10x differs from 1x's, it runs to the "
           "largest scale that ended alike. Exit 1 is a budget's refusal with one error "
           "([security.md](security.md#not-guaranteed)).", "",
           "| shape | 1x size | 1x s | 1x MiB | 2x s | 4x s | 10x s | 10x MiB | exits | "
           "slope, time | slope, memory |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for name, what, base, unit in CURVES:
        by = {r["scale"]: r for r in rows if r["shape"] == name}
        if set(by) != set(SCALES):
            continue

        def secs(scale):
            r = by[scale]
            return f"over {CURVES_TIMEOUT}" if r["exit"] == "stopped" else f"{r['wall']:.2f}"

        # The slope runs to the largest scale that ended as 1x did (a budget's refusal
        # at 10x is another program path).
        same = [s for s in SCALES if s > 1 and by[s]["exit"] == by[1]["exit"] != "stopped"]
        to = max(same, default=None)
        t = slope(by[1]["wall"], by[to]["wall"], to) if to else None
        m = slope(by[1]["kib"], by[to]["kib"], to) if to else None
        note = "" if to in (None, 10) else f" (to {to}x)"
        exits = "/".join(str(by[s]["exit"]) for s in SCALES)
        out.append(f"| `{name}`: {what} | {base:,} {unit} | {secs(1)} | {by[1]['kib'] // 1024} | "
                   f"{secs(2)} | {secs(4)} | {secs(10)} | {by[10]['kib'] // 1024} | {exits} | "
                   f"{'-' if t is None else f'{t:.2f}{note}'} | "
                   f"{'-' if m is None else f'{m:.2f}{note}'} |")
    out += ["", CURVES_END]
    return "\n".join(out) + "\n"


def write_block(page_path, start, end, block):
    """Replaces the block between `start` and `end` in the page (or puts it before `## Not
    measured here`): how a command writes the part of docs/evaluation.md it owns."""
    page = open(page_path).read()
    if start in page and end in page:
        head, rest = page.split(start, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        page = head + block + "\n" + tail
    else:
        head, tail = page.split("## Not measured here", 1)
        page = head + block + "\n## Not measured here" + tail
    with open(page_path, "w") as f:
        f.write(page)


def write_curves(block):
    """Replaces docs/evaluation.md's scaling block."""
    write_block(CURVES_PAGE, CURVES_START, CURVES_END, block)


def main():
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
        return
    if sys.argv[1:2] not in (["--curves"], ["--check"]) and any(
            a.startswith("-") for a in sys.argv[1:]):
        sys.exit(f"pathological: unknown option in {sys.argv[1:]}; see --help")
    if sys.argv[1:2] == ["--curves"]:
        args = sys.argv[2:]
        ww = args[1] if args[:1] == ["--ww"] and len(args) == 2 else os.path.join(
            REPO, "target", "release", "warpwise")
        version = subprocess.run([ww, "--version"], capture_output=True,
                                 text=True).stdout.strip()
        facts = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "version": version,
                 "cores": os.cpu_count()}
        write_curves(curves_block(curves(ww), facts))
        print(f"wrote the growth table of {os.path.relpath(CURVES_PAGE, REPO)}")
        return
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
