#!/usr/bin/env python3
"""Profiler overhead on PolyBench-style kernels at a realistic size.

    python3 profile/benches/overhead.py [--mini] [--modes=count,default,all,full] [KERNEL...]

Builds every kernel of profile/benches/kernels/ plain (`cc -O2`) and instrumented with
`warpwise cc -O2` in four modes (WARPWISE_LOOPS=none: counting only; the default: the
needs-profile loops tracked; all: every loop tracked; full: the needs-profile loops with
every access watched, without the filter), runs each binary three times and
prints, per mode, the CPU time (user + system, build excluded) and the peak resident
memory as ratios to the plain run's (best of three each). `WW` names the warpwise binary
(default: the release build). Every run's output must equal the plain run's: a profiled
program that computes something else is a failure, not a slow run.

Standard library only; needs `cc`.
"""
import glob
import os
import resource
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(REPO, "profile", "benches", "kernels")
WW = os.environ.get("WW", os.path.join(REPO, "target", "release", "warpwise"))
# mode: the environment of `warpwise cc` ("full": every access of the needs-profile loops
# watched, the reference the default mode's filter is tested against).
MODES = [("count", {"WARPWISE_LOOPS": "none"}), ("default", {}), ("all", {"WARPWISE_LOOPS": "all"}),
         ("full", {"WARPWISE_FULL_TRACKING": "1"})]
RUNS = 3


def run(binary, env):
    """(output, CPU seconds, peak KiB) of one run of `binary`."""
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(env["OUT"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 1)
            os.execve(binary, [binary], env)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} failed ({status})")
    with open(env["OUT"]) as f:
        out = f.read()
    return out, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def best(binary, env):
    results = [run(binary, env) for _ in range(RUNS)]
    outs = {r[0] for r in results}
    if len(outs) != 1:
        sys.exit(f"{binary}: runs disagree")
    return outs.pop(), min(r[1] for r in results), min(r[2] for r in results)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    mini = "--mini" in sys.argv
    size = ["-DMINI"] if mini else []
    wanted = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--modes=")),
                  ["count", "default", "all"])
    modes = [(m, e) for m, e in MODES if m in wanted]
    names = args or sorted(os.path.basename(p)[:-2] for p in glob.glob(f"{KERNELS}/*.c"))
    tmp = tempfile.mkdtemp(prefix="ww-overhead-")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("WARPWISE_")}
    print(f"{'kernel':<12} {'plain s':>8} {'plain MB':>9}"
          + "".join(f" {m + ' cpu':>12} {m + ' mem':>12}" for m, _ in modes))
    for name in names:
        src = os.path.join(KERNELS, name + ".c")
        plain = os.path.join(tmp, name)
        subprocess.run(["cc", "-O2", *size, "-o", plain, src, "-lm"], check=True)
        env = dict(base_env, OUT=os.path.join(tmp, "out"),
                   WARPWISE_PROFILE=os.path.join(tmp, "p.yaml"))
        expected, cpu, mem = best(plain, env)
        row = f"{name:<12} {cpu:8.2f} {mem / 1024:9.1f}"
        for mode, extra in modes:
            binary = os.path.join(tmp, f"{name}.{mode}")
            cc_env = dict(base_env, **extra)
            subprocess.run([WW, "cc", "-O2", *size, "-o", binary, src, "-lm"], check=True,
                           env=cc_env, stderr=subprocess.DEVNULL)
            out, c, m = best(binary, env)
            if out != expected:
                sys.exit(f"{name} ({mode}): output differs from the plain run's")
            row += f" {c / max(cpu, 1e-3):11.2f}x {m / max(mem, 1):11.2f}x"
            for p in glob.glob(os.path.join(tmp, "p.yaml*")):
                os.unlink(p)
        print(row, flush=True)


if __name__ == "__main__":
    main()
