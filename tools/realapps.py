#!/usr/bin/env python3
"""Measure warpwise on real OpenMP C applications nobody here wrote.

The authors' `#pragma omp parallel for` / `omp for` loops are the ground truth: they are
parallel. For every application this prints how many of them warpwise calls friendly,
needs-profile and not-friendly, and the reasons of the others.

    python3 tools/realapps.py fetch [APP...]   # download the sources (Debian, PyPI)
    python3 tools/realapps.py report [APP...]  # measure, then write docs/evaluation.md and
                                               # README.md's summary (release build)
    python3 tools/realapps.py measure [APP...] # analyse them (release build of warpwise)
    python3 tools/realapps.py port [APP...]    # port the authors' friendly loops to OpenMP
                                               # offload and compile the ports (clang-16);
                                               # ALL_LOOPS=1: every outermost friendly loop
    python3 tools/realapps.py port-cuda [APP...] # CUDA kernels for them, compiled by NVRTC
                                               # (`emit --check`; WARPWISE_NVRTC as in the docs;
                                               # STRIDE=k samples every k-th loop)
    python3 tools/realapps.py speed [APP...]   # warpwise `analyze` against `gcc -O2 -c`, file
                                               # by file: CPU time (best of 3) and peak RSS;
                                               # per-file numbers in $WARPWISE_REALAPPS/speed.json

`WW` names the warpwise binary to run, `WW_FLAGS` adds flags to `analyze` (for example
`WW_FLAGS="--aliasing call-sites"`), `NR` how many reasons to print per loop.

Sources go to $WARPWISE_REALAPPS (default ~/.cache/warpwise-realapps), never into the
repository, with the configuration headers their builds would generate. `fetch` needs root
for `apt-get source` (it adds `deb-src` to the Debian sources) and reaches only Debian's and
PyPI's registries. Standard library only.
"""
import collections
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.environ.get("WARPWISE_REALAPPS", os.path.expanduser("~/.cache/warpwise-realapps"))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENMP = ["-D_OPENMP=201511"]

# GraphicsMagick: the files holding the authors' OpenMP loops.
GM_FILES = ("analyze.c average.c cdl.c colorspace.c command.c decorate.c effect.c enhance.c fx.c "
            "gem.c gradient.c pixel_iterator.c render.c resize.c segment.c shear.c texture.c "
            "transform.c")
# code_saturne's include directories (a sequential build with OpenMP, no MPI, no PETSc).
SATURNE_INCLUDES = ["-DHAVE_CONFIG_H", "-I", "{cfg}/code_saturne", "-I", "../libple/src"] + [
    flag for d in ("base alge bft fvm mesh cdo gui turb lagr pprt cogz comb elec atmo ctwr rayt "
                   "cfbl darc meg mei apps").split() for flag in ("-I", d)]
HYPRE_INCLUDES = ["-I", "{cfg}/hypre", "-I", ".", "-I", "utilities", "-I", "seq_mv",
                  "-I", "parcsr_mv", "-I", "lapack", "-I", "blas"]
# name, domain, where the sources come from, directory (relative to ROOT), files (globs
# relative to the directory, separated by spaces), flags ({cfg}: the generated headers)
APPS = [
    ("phonopy", "lattice dynamics", ("pypi", "phonopy", "4.10.0"), "phonopy-4.10.0/c", "*.c", OPENMP),
    ("phono3py", "anharmonic phonons", ("pypi", "phono3py", "4.10.0"), "phono3py-4.10.0/c", "*.c", OPENMP),
    ("spglib", "crystal symmetry", ("pypi", "spglib", "2.8.0"), "spglib-2.8.0/src", "*.c",
     OPENMP + ["-I", "../include", "-I", "{cfg}/spglib"]),
    ("dtaidistance", "time-series DTW", ("pypi", "dtaidistance", "2.5.1"),
     "dtaidistance-2.5.1/src/DTAIDistanceC/DTAIDistanceC", "*.c", OPENMP),
    ("pykdtree", "k-d tree search", ("pypi", "pykdtree", "1.4.3"), "pykdtree-1.4.3/pykdtree",
     "_kdtree_core.c", OPENMP),
    ("fasttree", "phylogenetics", ("deb", "fasttree", "2.1.11"), "fasttree-2.1.11", "fasttree.c",
     OPENMP + ["-DOPENMP"]),
    ("velvet", "genome assembly", ("deb", "velvet", "1.2.10"), "velvet_1.2.10/src", "*.c",
     OPENMP + ["-DCATEGORIES=2", "-DMAXKMERLENGTH=31"]),
    ("kissfft", "FFT", ("deb", "kissfft", "131.1.0"), "kissfft-131.1.0", "kiss_fft.c", OPENMP),
    ("sundials", "ODE solver vectors", ("deb", "sundials", "6.4.1"),
     "sundials-6.4.1/src/nvector/openmp", "nvector_openmp.c",
     OPENMP + ["-I", "{cfg}", "-I", "../../../include", "-I", "../../sundials"]),
    # Sequential (no MPI) build with OpenMP; the sparse matrix and vector kernels under AMG.
    ("hypre", "multigrid sparse linear algebra", ("deb", "hypre", "2.26.0"), "hypre-2.26.0/src",
     "seq_mv/*.c parcsr_mv/*.c utilities/*.c", OPENMP + HYPRE_INCLUDES),
    # The distance kernels are a header; `fetch` writes a .c that includes it.
    ("mdanalysis", "molecular dynamics", ("pypi", "MDAnalysis", "2.11.0"),
     "mdanalysis-2.11.0/MDAnalysis/lib/include", "calc_distances.c", OPENMP + ["-DPARALLEL"]),
    # The linear algebra (matrices, Krylov solvers, multigrid, gradients, convection-
    # diffusion) and the base layer of a finite-volume CFD code; PETSc's bindings excluded.
    ("code_saturne", "CFD (finite volume)", ("deb", "code-saturne", "6.0.2"),
     "code_saturne-6.0.2/src", "alge/*.c base/*.c bft/*.c !alge/cs_sles_petsc.c",
     OPENMP + SATURNE_INCLUDES),
    ("graphicsmagick", "image processing", ("deb", "graphicsmagick", "1.3.40"),
     "GraphicsMagick-1.3.40/magick", GM_FILES, OPENMP + ["-I", "{cfg}/graphicsmagick", "-I", ".."]),
]

# What CMake would generate for sundials' default double-precision build.
SUNDIALS_CONFIG = """#define SUNDIALS_VERSION "6.4.1"
#define SUNDIALS_VERSION_MAJOR 6
#define SUNDIALS_VERSION_MINOR 4
#define SUNDIALS_VERSION_PATCH 1
#define SUNDIALS_VERSION_LABEL ""
#define SUNDIALS_GIT_VERSION ""
#define SUNDIALS_DOUBLE_PRECISION 1
#define SUNDIALS_INT64_T 1
#define SUNDIALS_INDEX_TYPE int64_t
#define SUNDIALS_COUNTER_TYPE long int
#define SUNDIALS_LOGGING_LEVEL 0
#define SUNDIALS_MPI_ENABLED 0
#define SUNDIALS_EXPORT
#define SUNDIALS_DEPRECATED_EXPORT
#define SUNDIALS_DEPRECATED_EXPORT_MSG(msg)
#define SUNDIALS_NO_EXPORT
#define SUNDIALS_STATIC_INLINE static inline
#define SUNDIALS_C_INLINE inline
#define SUNDIALS_MAGIC_NUMBER 0x1
#define SUNDIALS_NVECTOR_OPENMP 1
#define SUNDIALS_F77_FUNC(name,NAME) name ## _
#define SUNDIALS_F77_FUNC_(name,NAME) name ## _
"""

# What hypre's configure writes for `--without-MPI --with-openmp` (the parts the code reads).
HYPRE_CONFIG = """#define HYPRE_RELEASE_NAME "hypre"
#define HYPRE_RELEASE_VERSION "2.26.0"
#define HYPRE_RELEASE_NUMBER 22600
#define HYPRE_RELEASE_DATE "2022/10/14"
#define HYPRE_RELEASE_TIME "00:00:00"
#define HYPRE_RELEASE_BUGS "https://github.com/hypre-space/hypre/issues"
#define HYPRE_DEVELOP_STRING ""
#define HYPRE_MAXDIM 3
#define HYPRE_SEQUENTIAL 1
#define HYPRE_USING_OPENMP 1
#define HYPRE_USING_HOST_MEMORY 1
#define HYPRE_USING_HYPRE_BLAS 1
#define HYPRE_USING_HYPRE_LAPACK 1
#define HYPRE_FMANGLE 0
#define HYPRE_FMANGLE_BLAS 0
#define HYPRE_FMANGLE_LAPACK 0
#define HYPRE_LINUX 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STDINT_H 1
"""

# What code_saturne's configure writes for a sequential build with OpenMP (the parts
# cs_defs.h reads).
SATURNE_CONFIG = "".join(f"#define HAVE_{h} 1\n" for h in (
    "OPENMP STDDEF_H STDINT_H INTTYPES_H STDBOOL_H SYS_TYPES_H SYS_STAT_H INT32_T INT64_T UINT32_T UINT64_T "
    "PTRDIFF_T LONG_LONG LONG_GNUM DLOPEN").split()) + "".join(
    f"#define SIZEOF_{t} {n}\n" for t, n in (("INT", 4), ("LONG", 8), ("LONG_LONG", 8),
                                             ("VOID_P", 8), ("SIZE_T", 8))) + (
    '#define PACKAGE_NAME "code_saturne"\n#define PACKAGE_VERSION "6.0.2"\n'
    '#define CS_APP_NAME "code_saturne"\n#define CS_VERSION "6.0.2"\n')

# What GraphicsMagick's configure writes on Linux with OpenMP, 16-bit quantum (Debian's Q16).
GM_CONFIG = """#define HAVE_OPENMP 1
#define QuantumDepth 16
#define STDC_HEADERS 1
#define HAS_C__func__ 1
""" + "".join(f"#define HAVE_{h} 1\n" for h in (
    "STDINT_H INTTYPES_H UNISTD_H STRING_H STDLIB_H LOCALE_H DIRENT_H PWD_H SYS_TYPES_H SYS_STAT_H "
    "SYS_TIME_H SYS_TIMES_H SYS_WAIT_H SYS_MMAN_H SYS_RESOURCE_H SYS_POLL_H PTHREAD MMAP POLL "
    "VSNPRINTF VSPRINTF SNPRINTF STRTOK_R STRERROR POPEN GETTIMEOFDAY TIMES SYSCONF PREAD PWRITE "
    "DECL_PREAD DECL_PWRITE GETRUSAGE CLOCK_GETTIME LOCALTIME_R GMTIME_R CTIME_R MKSTEMP RAND_R "
    "ATOLL STRTOLL").split()) + "".join(f'#define Magick{k} "{v}"\n' for k, v in {
        "LibSubdir": "GraphicsMagick-1.3.40",
        "LibConfigSubDir": "GraphicsMagick-1.3.40/config",
        "ShareConfigSubDir": "GraphicsMagick-1.3.40/config",
        "LibPath": "/usr/lib/GraphicsMagick-1.3.40/",
        "LibConfigPath": "/usr/lib/GraphicsMagick-1.3.40/config/",
        "SharePath": "/usr/share/GraphicsMagick-1.3.40/",
        "ShareConfigPath": "/usr/share/GraphicsMagick-1.3.40/config/",
        "CodersDirectory": "/usr/lib/GraphicsMagick-1.3.40/modules-Q16/coders",
        "FilterDirectory": "/usr/lib/GraphicsMagick-1.3.40/modules-Q16/filters"}.items())

# Generated files (relative to ROOT) and their text. calc_distances.h uses uint64_t without
# including <stdint.h> (the Cython module that includes it has it already).
GENERATED = {
    "cfg/sundials/sundials_config.h": SUNDIALS_CONFIG,
    "cfg/hypre/HYPRE_config.h": HYPRE_CONFIG,
    "cfg/code_saturne/cs_config.h": SATURNE_CONFIG,
    "cfg/code_saturne/cs_config_priv.h": "#define HAVE_UNISTD_H 1\n",
    "cfg/code_saturne/ple_config.h": "/* what configure writes without MPI: nothing */\n",
    "cfg/code_saturne/ple_config_priv.h": "".join(
        f"#define HAVE_{h} 1\n" for h in "STDINT_H STDBOOL_H INT32_T INT64_T UINT32_T UINT64_T".split()),
    "cfg/graphicsmagick/magick/magick_config.h": GM_CONFIG,
    # What spglib's CMake writes from src/version.h.in for the 2.8.0 release.
    "cfg/spglib/version.h": '#define SPGLIB_MAJOR_VERSION 2\n#define SPGLIB_MINOR_VERSION 8\n'
        '#define SPGLIB_MICRO_VERSION 0\n#define SPGLIB_VERSION "2.8.0"\n'
        '#define SPGLIB_VERSION_FULL "2.8.0"\n#define SPGLIB_COMMIT ""\n',
    "mdanalysis-2.11.0/MDAnalysis/lib/include/calc_distances.c":
        '#include <stdint.h>\n#include "calc_distances.h"\n',
}

PARALLEL_FOR = re.compile(r"omp\s+(parallel\s+)?for\b")


def fetch(only):
    """Download the applications in `only` (all when empty) that are not there yet."""
    unknown = only - {a[0] for a in APPS}
    if unknown:
        sys.exit(f"unknown applications: {' '.join(sorted(unknown))}")
    os.makedirs(ROOT, exist_ok=True)
    wanted = [a for a in APPS if (not only or a[0] in only)
              and not os.path.isdir(os.path.join(ROOT, a[3].split("/")[0]))]
    # Headers the applications include: LAPACKE (phono3py), zlib (velvet).
    headers = {"phono3py": ("liblapacke-dev", "lapacke.h"), "velvet": ("zlib1g-dev", "zlib.h")}
    needed = [package for name, (package, header) in headers.items()
              if (not only or name in only) and not os.path.exists(f"/usr/include/{header}")]
    if needed or any(src[0] == "deb" for _, _, src, *_ in wanted):
        sources = "/etc/apt/sources.list.d/debian.sources"
        if os.path.exists(sources) and "deb-src" not in open(sources).read():
            text = open(sources).read().replace("Types: deb\n", "Types: deb deb-src\n")
            open(sources, "w").write(text)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
    if needed:
        subprocess.run(["apt-get", "install", "-y", "-qq", *needed], check=True)
    for name, _, (kind, package, version), directory, *_ in wanted:
        print(f"fetching {name}", file=sys.stderr)
        if kind == "deb":
            # Only the upstream tarball is needed (some Debian parts of old releases are
            # gone from the mirror, which apt-get reports as a failure).
            subprocess.run(["apt-get", "source", "-qq", "--download-only", package], cwd=ROOT)
            archives = [a for a in glob.glob(os.path.join(ROOT, f"{package}_*.orig.tar.*"))
                        if not a.endswith(".asc")]
            if not archives:
                sys.exit(f"no upstream tarball of {package} could be downloaded")
            with tarfile.open(archives[0]) as t:
                top = t.getnames()[0].split("/")[0]
                t.extractall(ROOT, filter="data")
            wanted = os.path.join(ROOT, directory.split("/")[0])
            if not os.path.isdir(wanted):
                os.rename(os.path.join(ROOT, top), wanted)
        else:
            meta_url = f"https://pypi.org/pypi/{package}/json"
            meta = json.load(urllib.request.urlopen(meta_url, timeout=120))
            files = meta["releases"].get(version) or []
            sdist = next(u for u in files if u["packagetype"] == "sdist")
            url = urllib.parse.urljoin(meta_url, sdist["url"])
            archive = os.path.join(ROOT, os.path.basename(url))
            urllib.request.urlretrieve(url, archive)
            with tarfile.open(archive) as t:
                t.extractall(ROOT, filter="data")
    for path, text in GENERATED.items():
        top = os.path.join(ROOT, path.split("/")[0])
        if not path.startswith("cfg/") and not os.path.isdir(top):
            continue  # the application was not fetched
        path = os.path.join(ROOT, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    # velvet's Debian source drops its bundled zlib; the system's has the same API.
    zlib = os.path.join(ROOT, "velvet_1.2.10", "third-party", "zlib-1.2.3")
    if os.path.isdir(os.path.dirname(os.path.dirname(zlib))) and not os.path.isdir(zlib):
        os.makedirs(zlib)
        for h in ("zlib.h", "zconf.h"):
            if os.path.exists(f"/usr/include/{h}"):
                os.symlink(f"/usr/include/{h}", os.path.join(zlib, h))


def app_files(directory, pattern):
    """An application's directory under ROOT and its files (relative to it), sorted."""
    cwd = os.path.join(ROOT, directory)
    # A pattern starting with `!` drops the files it names (sources the build leaves out).
    dropped = {os.path.normpath(p[1:]) for p in pattern.split() if p.startswith("!")}
    return cwd, sorted(rel for p in pattern.split() if not p.startswith("!")
                       for f in glob.glob(os.path.join(cwd, p))
                       if (rel := os.path.relpath(f, cwd)) not in dropped)


def selected_apps(only):
    """The applications named in `only` (all when empty): name, domain, the directory the
    tools run in, the files (relative to it) and the flags, `{cfg}` filled in."""
    for name, domain, _, directory, pattern, flags in APPS:
        if only and name not in only:
            continue
        cwd, files = app_files(directory, pattern)
        yield name, domain, cwd, files, [f.replace("{cfg}", os.path.join(ROOT, "cfg")) for f in flags]


def warpwise_binary():
    return os.environ.get("WW", os.path.join(REPO, "target", "release", "warpwise"))


def measure(only):
    warpwise = warpwise_binary()
    total, every = collections.Counter(), collections.Counter()
    verbose = int(os.environ.get("NR", "2"))
    for name, domain, cwd, files, flags in selected_apps(only):
        if not files:
            print(f"== {name}: not fetched ({cwd})")
            continue
        tag = "-".join(f.strip("-") for f in os.environ.get("WW_FLAGS", "").split())
        out = os.path.join(ROOT, f"{name}{'.' + tag if tag else ''}.report.json")
        extra = os.environ.get("WW_FLAGS", "").split()
        started = time.monotonic()
        run = subprocess.run([warpwise, "analyze", *files, *flags, *extra, "--format", "json",
                              "-o", out],
                             cwd=cwd, capture_output=True, text=True)
        elapsed = time.monotonic() - started
        try:
            report = json.load(open(out))
        except (OSError, ValueError):
            print(f"== {name}: warpwise failed ({run.returncode}): {run.stderr[-1000:]}")
            continue
        loops = report["loops"]
        marked = [l for l in loops if any(PARALLEL_FOR.search(p) for p in l.get("pragmas", []))]
        counts = collections.Counter(l["verdict"] for l in marked)
        total.update(counts)
        every.update(l["verdict"] for l in loops)
        n = len(marked) or 1
        print(f"== {name} ({domain}): {len(files)} files, {len(loops)} loops, "
              f"{len(report.get('skipped', []))} skipped; authors' parallel loops {len(marked)}: "
              f"friendly {counts['friendly']} ({100 * counts['friendly'] // n}%), "
              f"needs-profile {counts['needs-profile']}, not-friendly {counts['not-friendly']}; "
              f"{elapsed:.1f} s")
        for skipped in report.get("skipped", []):
            print("   skipped:", skipped[:200])
        # The report verifier's findings: each is a bug of warpwise.
        checks = [l for l in run.stderr.splitlines() if l.startswith("warning: report check")]
        print(f"   report checks failed: {len(checks)}")
        for c in checks[:3]:
            print("   ", c[:200], "...", c[-160:] if len(c) > 360 else "")
        for l in marked:
            if l["verdict"] == "friendly":
                continue
            codes = collections.Counter(r["code"] for r in l.get("reasons", []))
            print(f"   {l['verdict']:13} {l['id']} {l['function']}: {dict(codes)}")
            for r in l.get("reasons", [])[:verbose]:
                print(f"        {r['code']} {r['message'][:220]}")
    n = sum(total.values()) or 1
    print(f"TOTAL authors' parallel loops {n}: friendly {total['friendly']} "
          f"({100 * total['friendly'] / n:.0f}%), needs-profile {total['needs-profile']}, "
          f"not-friendly {total['not-friendly']}; all loops {dict(every)}")


def friendly_authors_loops(only):
    """Each measured application (those in `only`, or all): its name, directory, files,
    flags and the ids of the authors' parallel loops its last report calls friendly."""
    for name, _, cwd, files, flags in selected_apps(only):
        try:
            report = json.load(open(os.path.join(ROOT, f"{name}.report.json")))
        except (OSError, ValueError):
            print(f"== {name}: no report; run `measure {name}` first")
            continue
        friendly = [l["id"] for l in report["loops"]
                    if l["verdict"] == "friendly"
                    and any(PARALLEL_FOR.search(p) for p in l.get("pragmas", []))]
        yield name, cwd, files, flags, friendly


def port(only):
    """`emit --target openmp --strict` on the authors' friendly loops (from `measure`'s
    reports), then each ported file compiled with clang's offloading to the host: with
    `defaultmap(none)` a variable the clauses miss is a compile error."""
    import shutil
    import tempfile
    warpwise = warpwise_binary()
    cc = os.environ.get("WARPWISE_OFFLOAD_CC", "clang-16")
    totals = collections.Counter()
    reasons = collections.Counter()
    for name, cwd, files, flags, friendly in friendly_authors_loops(only):
        if not friendly and os.environ.get("ALL_LOOPS") != "1":
            print(f"== {name}: no friendly authors' loop")
            continue
        out = tempfile.mkdtemp(prefix=f"warpwise-port-{name}-")
        # `ALL_LOOPS=1`: every outermost friendly loop, not only the authors'.
        every = os.environ.get("ALL_LOOPS") == "1"
        loops = [] if every else [a for l in friendly for a in ("--loop", l)]
        run = subprocess.run([warpwise, "emit", "--target", "openmp", "--strict", *files, *flags,
                              *loops, "-o", out], cwd=cwd, capture_output=True, text=True)
        ported = [l.split()[1] for l in run.stderr.splitlines() if l.startswith("ported ")]
        refused = [l for l in run.stderr.splitlines() if l.startswith("not ported ")]
        if every:
            friendly = ported + refused
        for r in refused:
            why = re.sub(r"^not ported [^ ]*: ", "", r)
            reasons[re.sub(r"`[^`]*`", "`_`", re.sub(r"\([^()]*\)", "", why))[:100]] += 1
        compiled, failed = 0, []
        # A ported header is compiled through the files that include it: a copy of each
        # beside it, so that its `#include "..."` finds the port before the original.
        headers = [f for f in os.listdir(out) if f.endswith(".h")]
        for g in files:
            base = os.path.basename(g)
            if not base.endswith(".c") or os.path.exists(os.path.join(out, base)):
                continue
            with open(os.path.join(cwd, g), errors="replace") as src:
                text = src.read()
            if any(re.search(r'#\s*include\s*"([^"]*/)?' + re.escape(h) + '"', text) for h in headers):
                shutil.copyfile(os.path.join(cwd, g), os.path.join(out, base))
        for f in sorted(os.listdir(out)):
            if not f.endswith(".c"):
                continue
            original = next((os.path.join(cwd, g) for g in files if os.path.basename(g) == f), None)
            inc = ["-iquote", os.path.dirname(original)] if original else []
            c = subprocess.run([cc, "-fopenmp", "-fopenmp-version=51",
                                "-fopenmp-targets=x86_64-pc-linux-gnu", "-w",
                                "-c", os.path.join(out, f), "-o", os.devnull, *inc, *flags],
                               cwd=cwd, capture_output=True, text=True)
            here = [l for l in ported if os.path.basename(l.split(":")[0]) == f
                    or (os.path.basename(l.split(":")[0]) in headers
                        and f == first_includer(out, f, headers, l))]
            if c.returncode == 0:
                compiled += len(here)
            else:
                errors = [l for l in c.stderr.splitlines() if "error:" in l]
                failed.append(f"{f} ({len(here)} loops): {errors[0][:200] if errors else c.stderr[-200:]}")
        shutil.rmtree(out)
        totals.update(friendly=len(friendly), ported=len(ported), compiled=compiled)
        print(f"== {name}: authors' friendly loops {len(friendly)}: ported {len(ported)}, "
              f"compile under {cc} offloading {compiled}")
        for r in refused[:int(os.environ.get("NR", "1000"))]:
            print("   " + r[:260])
        for f in failed:
            print("   compile error: " + f)
    print(f"TOTAL {'outermost' if os.environ.get('ALL_LOOPS') == '1' else 'authors'} "
          f"friendly loops {totals['friendly']}: ported {totals['ported']}, "
          f"compile {totals['compiled']}")
    for why, n in reasons.most_common(15):
        print(f"   {n:5} {why}")


def first_includer(out, f, headers, loop):
    """The first `.c` file in `out` (by name) that includes the header holding `loop`: the
    one whose compilation counts that loop."""
    header = os.path.basename(loop.split(":")[0])
    for c in sorted(x for x in os.listdir(out) if x.endswith(".c")):
        with open(os.path.join(out, c), errors="replace") as src:
            if re.search(r'#\s*include\s*"([^"]*/)?' + re.escape(header) + '"', src.read()):
                return c
    return None


def port_cuda(only):
    """`emit --target cuda --check` on each of the authors' friendly loops (one kernel per
    loop): generated and compiled by NVRTC, or refused, with the refusals grouped by reason."""
    import shutil
    import tempfile
    warpwise = warpwise_binary()
    totals = collections.Counter()
    reasons = collections.Counter()
    # `STRIDE=k` takes every k-th loop: a sample, for applications whose whole-program
    # analysis makes one `emit` per loop slow (code_saturne: 16 s each).
    stride = int(os.environ.get("STRIDE", "1"))
    for name, cwd, files, flags, friendly in friendly_authors_loops(only):
        compiled, refused, broken = 0, [], []
        friendly = friendly[::stride]
        for loop in friendly:
            out = tempfile.mkdtemp(prefix=f"warpwise-cuda-{name}-")
            run = subprocess.run([warpwise, "emit", "--target", "cuda", "--check", *files, *flags,
                                  "--loop", loop, "-o", out], cwd=cwd, capture_output=True,
                                 text=True)
            shutil.rmtree(out)
            text = run.stderr
            if run.returncode == 0 and "NVRTC compiled" in text:
                compiled += 1
            elif "does not compile" in text or run.returncode == 0:
                broken.append(f"{loop}: {text.strip().splitlines()[-1][:200] if text.strip() else ''}")
            else:
                why = next((l for l in text.splitlines() if l.startswith("error")), text[-200:])
                # Group by the reason without the loop id and names in backquotes.
                key = re.sub(r"`[^`]*`", "`_`", re.sub(r"^error: (loop )?[^ ]*: ", "", why))[:110]
                reasons[key] += 1
                refused.append(f"{loop}: {why[:220]}")
        totals.update(friendly=len(friendly), compiled=compiled, refused=len(refused),
                      broken=len(broken))
        print(f"== {name}: authors' friendly loops {len(friendly)}: CUDA generated and compiled "
              f"{compiled}, refused {len(refused)}, generated but not compiling {len(broken)}")
        for r in refused[:int(os.environ.get("NR", "5"))]:
            print("   refused " + r)
        for b in broken:
            print("   DOES NOT COMPILE " + b)
    print(f"TOTAL authors' friendly loops {totals['friendly']}: CUDA compiled {totals['compiled']}, "
          f"refused {totals['refused']}, not compiling {totals['broken']}")
    for why, n in reasons.most_common(12):
        print(f"   {n:4d}  {why}")


TIMEOUT = 300  # seconds of wall time per run of `speed`
RUNS = 3       # runs per tool and file; the least CPU time counts


# Runs one command for `speed` and prints its CPU time (user + system, its waited-for
# children included), peak RSS (KiB) and exit code. A child's ru_maxrss starts at the peak
# RSS of the process that spawned it (vfork, as subprocess and posix_spawn do): spawned by
# this script it would read 80 MiB once a few reports were loaded, spawned by this small
# fresh interpreter about 8 MiB (`speed` prints the exact floor).
MEASURE = """import os, sys
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ,
                      file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def run_child(argv, cwd):
    """Run argv once: its CPU time (from wait4, not wall time: other builds load the
    machine), its peak RSS in KiB, its exit code (negative: a signal), whether it ran past
    TIMEOUT, and the end of its stderr."""
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen([sys.executable, "-S", "-I", "-c", MEASURE, *argv], cwd=cwd,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                 preexec_fn=os.setsid)
        try:
            out, timed_out = child.communicate(timeout=TIMEOUT)[0], False
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            out, timed_out = child.communicate()[0], True
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
    try:
        cpu, rss, code = out.split()
    except ValueError:  # killed, or the measuring interpreter failed
        cpu, rss, code = 0, 0, child.returncode
    return {"cpu": float(cpu), "rss_kib": int(rss), "exit": int(code), "timed_out": timed_out,
            "stderr": tail}


def best_of(argv, cwd):
    """RUNS runs of argv (stopping at the first failure): the least CPU time, the largest
    peak RSS, every run's CPU time, and the failing run's exit and stderr, if one failed."""
    runs = []
    for _ in range(RUNS):
        runs.append(run_child(argv, cwd))
        if runs[-1]["exit"] != 0 or runs[-1]["timed_out"]:
            break
    last = runs[-1]
    failed = last["exit"] != 0 or last["timed_out"]
    return {"cpu": min(r["cpu"] for r in runs), "rss_kib": max(r["rss_kib"] for r in runs),
            "runs": [round(r["cpu"], 4) for r in runs], "exit": last["exit"],
            "timed_out": last["timed_out"],
            "error": (last["stderr"] or "(nothing on stderr)") if failed else None}


def speed_file(cwd, path, flags, warpwise, extra):
    """One file: gcc -O2 -c, then warpwise analyze on it alone with the same flags (its JSON
    report in a fresh temporary file, read back for the loops and the skipped functions).
    Analyze exits 0 when it analysed something, 1 when nothing, 2 on usage errors, 128 + N
    on signal N: all but 0 are failures. None of warpwise's numbers when gcc fails."""
    gcc = best_of(["gcc", "-O2", "-c", path, "-o", os.devnull, *flags], cwd)
    entry = {"file": path, "gcc": gcc}
    if gcc["error"] is not None:
        return entry
    fd, out = tempfile.mkstemp(prefix="warpwise-speed-", suffix=".json")
    os.close(fd)
    try:
        ww = best_of([warpwise, "analyze", path, *flags, *extra, "--format", "json", "-o", out],
                     cwd)
        try:
            report = json.load(open(out))
            ww["loops"], ww["skipped"] = len(report["loops"]), report.get("skipped", [])
        except (OSError, ValueError, KeyError) as e:
            ww["error"] = ww["error"] or f"no report ({e})"
    finally:
        os.unlink(out)
    entry["warpwise"] = ww
    if ww["error"] is None:
        entry["ratio"] = ww["cpu"] / max(gcc["cpu"], 1e-3)
    return entry


def failure(result):
    if result["timed_out"]:
        return f"timed out after {TIMEOUT} s"
    lines = [l for l in (result["error"] or "").splitlines() if l.strip()]
    return f"exit {result['exit']}: {' | '.join(lines[-3:])[:300]}"


def speed_app(name, cwd, files, flags, warpwise, extra):
    """Every file of one application, printed as it goes, then its summary; its entries."""
    entries = []
    for path in files:
        entry = speed_file(cwd, path, flags, warpwise, extra)
        entry["app"] = name
        entries.append(entry)
        gcc, ww = entry["gcc"], entry.get("warpwise")
        if gcc["error"] is not None:
            print(f"   gcc fails, skipped: {path}: {failure(gcc)}", flush=True)
        elif ww["error"] is not None:
            print(f"   WARPWISE FAILS: {path}: {failure(ww)}", flush=True)
        else:
            note = f", {len(ww['skipped'])} skipped" if ww["skipped"] else ""
            print(f"   {path}: gcc {gcc['cpu']:.2f} s {gcc['rss_kib'] // 1024} MiB, warpwise "
                  f"{ww['cpu']:.2f} s {ww['rss_kib'] // 1024} MiB, {entry['ratio']:.2f}x "
                  f"({ww['loops']} loops{note})", flush=True)
            for s in ww["skipped"]:
                print("      skipped:", str(s)[:200])
    timed = [e for e in entries if "ratio" in e]
    worst = max(timed, key=lambda e: e["ratio"], default=None)
    print(f"== {name}: {len(files)} files ({len(timed)} timed, "
          f"{sum(e['gcc']['error'] is not None for e in entries)} gcc failures, "
          f"{sum('warpwise' in e and 'ratio' not in e for e in entries)} warpwise failures); "
          + (f"warpwise/gcc CPU median {statistics.median(e['ratio'] for e in timed):.2f}x, "
             f"max {worst['ratio']:.2f}x ({worst['file']}), "
             f"over 1x {sum(e['ratio'] > 1 for e in timed)}; "
             f"total gcc {sum(e['gcc']['cpu'] for e in timed):.1f} s, "
             f"warpwise {sum(e['warpwise']['cpu'] for e in timed):.1f} s" if timed else "nothing timed"),
          flush=True)
    return entries


def speed(only):
    """warpwise analyze against gcc -O2 -c on each file of each application (one file at a
    time, the flags and directory `measure` uses), sequentially: CPU times and peak RSS."""
    unknown = only - {a[0] for a in APPS}
    if unknown:
        sys.exit(f"unknown applications: {' '.join(sorted(unknown))}")
    warpwise = warpwise_binary()
    extra = os.environ.get("WW_FLAGS", "").split()
    floor = run_child(["true"], ROOT)["rss_kib"]
    print(f"peak RSS of `true`, the floor of every peak RSS here: {floor / 1024:.1f} MiB")
    entries = []
    for name, _, cwd, files, flags in selected_apps(only):
        if not files:
            print(f"== {name}: not fetched ({cwd})")
            continue
        entries += speed_app(name, cwd, files, flags, warpwise, extra)
    timed = [e for e in entries if "ratio" in e]
    failed = [e for e in entries if "warpwise" in e and "ratio" not in e]
    gcc_failed = [e for e in entries if e["gcc"]["error"] is not None]
    print(f"TOTAL {len(entries)} files: {len(timed)} timed, {len(gcc_failed)} skipped (gcc fails), "
          f"{len(failed)} warpwise failures")
    for e in gcc_failed:
        print(f"   gcc fails: {e['app']} {e['file']}: {failure(e['gcc'])}")
    for e in failed:
        print(f"   WARPWISE FAILS: {e['app']} {e['file']}: {failure(e['warpwise'])}")
    if timed:
        print(f"   warpwise/gcc CPU time: median {statistics.median(e['ratio'] for e in timed):.2f}x; "
              f"total gcc {sum(e['gcc']['cpu'] for e in timed):.1f} s, "
              f"warpwise {sum(e['warpwise']['cpu'] for e in timed):.1f} s")
        over = sorted((e for e in timed if e["ratio"] > 1), key=lambda e: -e["ratio"])
        print(f"   over 1x: {len(over)}")
        for e in over:
            print(f"      {e['ratio']:6.2f}x  {e['app']} {e['file']}: warpwise "
                  f"{e['warpwise']['cpu']:.2f} s, gcc {e['gcc']['cpu']:.2f} s")
        for tool in ("gcc", "warpwise"):
            top = max(timed, key=lambda e: e[tool]["rss_kib"])
            print(f"   peak RSS {tool}: {top[tool]['rss_kib'] / 1024:.0f} MiB "
                  f"({top['app']} {top['file']})")
    out = os.path.join(ROOT, "speed.json")
    with open(out, "w") as f:
        json.dump({"warpwise": warpwise, "flags": extra, "runs": RUNS, "timeout_s": TIMEOUT,
                   "rss_floor_kib": floor, "files": entries}, f, indent=1)
    print(f"per-file numbers: {out}")


# The generated page and the README block `report` writes (relative to the repository).
EVALUATION_PAGE = os.path.join("docs", "evaluation.md")
SUMMARY_START = "<!-- evaluation-summary: generated by `python3 tools/realapps.py report` -->"
SUMMARY_END = "<!-- end of evaluation-summary -->"
REPORT_COMMAND = "python3 tools/realapps.py report"
# gcc -O2 takes many minutes on some of the pathological shapes; it is stopped after this.
GCC_SHAPE_TIMEOUT = 120


def analyze_app(warpwise, cwd, files, flags, extra):
    """One whole-program `analyze` of an application: CPU seconds, peak RSS (KiB) and the
    verdicts of its loops, or an error."""
    fd, out = tempfile.mkstemp(prefix="warpwise-report-", suffix=".json")
    os.close(fd)
    try:
        run = run_child([warpwise, "analyze", *files, *flags, *extra, "--format", "json",
                         "-o", out], cwd)
        try:
            loops = json.load(open(out))["loops"]
        except (OSError, ValueError, KeyError):
            return {"error": failure({**run, "error": run["stderr"]})}
    finally:
        os.unlink(out)
    marked = [l for l in loops if any(PARALLEL_FOR.search(p) for p in l.get("pragmas", []))]
    return {"cpu": run["cpu"], "rss_kib": run["rss_kib"], "loops": len(loops),
            "authors": collections.Counter(l["verdict"] for l in marked),
            "marked": len(marked), "texts": text_faults(loops), "error": None}


# A name qualified by the place that computes its value (`n@12`, `i@63:18`, `i@?2`,
# `i@f:12`, `k@j`): warpwise's own way of telling two values of one variable apart, which
# no C reader knows; a written report shows each as the identifier its legend (`names`)
# defines, so none should remain.
QUALIFIED = re.compile(r"[\w\])]@[\w?]")
# A floor function of the engine, which C has no operator for.
FLOOR = re.compile(r"\bfloor_(div|mod)\(")
# The fields that quote the program's own text.
QUOTES = ("access", "text", "element", "condition")


def balanced(text):
    """Brackets nest, string and character literals aside."""
    depth, literal, escaped = [], None, False
    for c in text:
        if literal:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == literal:
                literal = None
            continue
        if c in "\"'":
            literal = c
        elif c in "([{":
            depth.append(")]}"["([{".index(c)])
        elif c in ")]}" and (not depth or depth.pop() != c):
            return False
    return not depth


def text_faults(loops):
    """What of the loops' report texts does not read as the program's C: quotes of the
    source that are fragments (unbalanced, or cut at a comma), parameter types that are not
    C (`?`, unbalanced), and texts naming a qualified value. Counts of texts, not of
    occurrences."""
    counts = collections.Counter()

    def walk(value, key):
        if isinstance(value, dict):
            counts["legend"] += len(value.get("names", [])) if "id" in value else 0
            for k, v in value.items():
                if QUALIFIED.search(k):
                    counts["qualified"] += 1
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            counts["texts"] += 1
            if QUALIFIED.search(value):
                counts["qualified"] += 1
            t = value.strip()
            # `bytes [8, 16) of `x`` is the report's own words for an element, not a quote.
            quote = key in QUOTES and not t.startswith("bytes [")
            if quote and (not balanced(t) or t.startswith(",") or t.endswith(",")):
                counts["fragments"] += 1
            if key == "c_type" and ("?" in t or not balanced(t)):
                counts["types"] += 1
            if FLOOR.search(value):
                counts["floors"] += 1

    walk(loops, None)
    return counts


def gcc_app(cwd, files, flags):
    """`gcc -O2 -c` of each file once: total CPU seconds and the files gcc rejects."""
    total, failed = 0.0, []
    for path in files:
        run = run_child(["gcc", "-O2", "-c", path, "-o", os.devnull, *flags], cwd)
        if run["exit"] != 0 or run["timed_out"]:
            failed.append(path)
        else:
            total += run["cpu"]
    return total, failed


def percent(part, whole):
    return f"{100 * part / whole:.0f}%" if whole else "-"


def report(only):
    """Measure every fetched application (those in `only`, or all) and the pathological
    shapes with the release build, then write docs/evaluation.md and README.md's summary."""
    unknown = only - {a[0] for a in APPS}
    if unknown:
        sys.exit(f"unknown applications: {' '.join(sorted(unknown))}")
    started = time.monotonic()
    warpwise = warpwise_binary()
    if not os.access(warpwise, os.X_OK):
        sys.exit(f"no warpwise binary at {warpwise}: run `cargo build --release` first")
    version = subprocess.run([warpwise, "--version"], capture_output=True, text=True).stdout.strip()
    gcc_version = subprocess.run(["gcc", "--version"], capture_output=True,
                                 text=True).stdout.splitlines()[0]
    rows, missing = [], []
    for name, domain, cwd, files, flags in selected_apps(only):
        if not files:
            missing.append(name)
            print(f"== {name}: not fetched ({cwd})", flush=True)
            continue
        default = analyze_app(warpwise, cwd, files, flags, [])
        strict = analyze_app(warpwise, cwd, files, flags, ["--aliasing", "call-sites"])
        gcc, gcc_failed = gcc_app(cwd, files, flags)
        rows.append({"name": name, "domain": domain, "files": len(files), "default": default,
                     "strict": strict, "gcc": gcc, "gcc_failed": gcc_failed})
        if default["error"]:
            print(f"== {name}: warpwise failed: {default['error']}", flush=True)
        else:
            a = default["authors"]
            print(f"== {name}: {default['loops']} loops; authors' {default['marked']}: "
                  f"{a['friendly']} / {a['needs-profile']} / {a['not-friendly']}; "
                  f"warpwise {default['cpu']:.1f} s, gcc {gcc:.1f} s", flush=True)
    shapes = []
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.dont_write_bytecode = True  # no __pycache__ in the repository
    import pathological
    with tempfile.TemporaryDirectory(prefix="warpwise-patho-") as out:
        for row in pathological.measure(warpwise, out, GCC_SHAPE_TIMEOUT):
            shapes.append(row)
            gcc = "stopped" if row["gcc_seconds"] is None else f"{row['gcc_seconds']:.2f} s"
            print(f"   {row['case']}: {row['cpu']:.2f} s CPU, {row['kib'] // 1024} MiB, "
                  f"exit {row['exit']}; gcc {gcc}", flush=True)
    took = time.monotonic() - started
    facts = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "version": version,
             "gcc": gcc_version, "cores": os.cpu_count(), "minutes": took / 60}
    page = evaluation_page(rows, missing, shapes, facts, kept_curves())
    with open(os.path.join(REPO, EVALUATION_PAGE), "w") as f:
        f.write(page)
    readme = os.path.join(REPO, "README.md")
    text = open(readme).read()
    if SUMMARY_START in text and SUMMARY_END in text:
        head, rest = text.split(SUMMARY_START, 1)
        tail = rest.split(SUMMARY_END, 1)[1]
        with open(readme, "w") as f:
            f.write(head + SUMMARY_START + "\n" + summary_table(rows, shapes, facts) + SUMMARY_END
                    + tail)
    else:
        print(f"README.md has no {SUMMARY_START} block; only {EVALUATION_PAGE} written")
    print(f"wrote {EVALUATION_PAGE} and README.md's summary in {took / 60:.1f} min")


def totals(rows, key):
    """The authors' loops over the rows measured with `key` (`default` or `strict`)."""
    done = [r for r in rows if not r[key]["error"]]
    counts = collections.Counter()
    for r in done:
        counts.update(r[key]["authors"])
    return counts, sum(r[key]["marked"] for r in done)


def summary_table(rows, shapes, facts):
    """README.md's table: the totals of docs/evaluation.md."""
    counts, marked = totals(rows, "default")
    strict, _ = totals(rows, "strict")
    timed = [r for r in rows if not r["default"]["error"]]
    ww = sum(r["default"]["cpu"] for r in timed)
    gcc = sum(r["gcc"] for r in timed)
    slowest = max(shapes, key=lambda s: s["cpu"], default=None)
    largest = max(shapes, key=lambda s: s["kib"], default=None)
    lines = ["| measure | result |", "| --- | --- |",
             f"| the authors' OpenMP loops of {len(timed)} real applications ({marked}) | "
             f"friendly {counts['friendly']} ({percent(counts['friendly'], marked)}), "
             f"needs-profile {counts['needs-profile']}, not-friendly {counts['not-friendly']} |",
             f"| the same with `--aliasing call-sites` | friendly {strict['friendly']} "
             f"({percent(strict['friendly'], marked)}), needs-profile {strict['needs-profile']}, "
             f"not-friendly {strict['not-friendly']} |",
             f"| analysis time of those applications, CPU | {ww:.1f} s, against {gcc:.1f} s for "
             f"`gcc -O2 -c` ({ww / gcc:.2f}x) |" if gcc else
             "| analysis time of those applications | not measured |"]
    if slowest:
        lines.append(f"| {len(shapes)} pathological code shapes, CPU | slowest {slowest['cpu']:.1f} s "
                     f"(`{slowest['case']}`), largest {largest['kib'] // 1024} MiB |")
    return "\n".join(lines) + f"\n\nMeasured on {facts['date']} with `{REPORT_COMMAND}`.\n"


def kept_curves():
    """docs/evaluation.md's blocks other commands own, as they last wrote them (`report`
    keeps them): the growth block of `tools/pathological.py --curves`, the whole-program
    ports of `tools/realports.py run --evaluation`, `check` on Rodinia of
    `tools/rodinia_check.py`, its speed against nvcc of `tools/rodinia_check.py --speed`
    and its runs of `tools/rodinia_check.py --dynamic`;
    "" for a block not there."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.dont_write_bytecode = True  # no __pycache__ in the repository
    import pathological
    import realports
    import rodinia_check
    try:
        page = open(os.path.join(REPO, EVALUATION_PAGE)).read()
    except OSError:
        return ""
    kept = []
    for start, end in [(realports.PORTS_START, realports.PORTS_END),
                       (rodinia_check.CHECK_START, rodinia_check.CHECK_END),
                       (rodinia_check.SPEED_START, rodinia_check.SPEED_END),
                       (rodinia_check.DYNAMIC_START, rodinia_check.DYNAMIC_END),
                       (pathological.CURVES_START, pathological.CURVES_END)]:
        if start in page and end in page:
            kept.append(start + page.split(start, 1)[1].split(end, 1)[0] + end + "\n")
    return "\n".join(kept)


def evaluation_page(rows, missing, shapes, facts, curves=""):
    """docs/evaluation.md: the tables of one measurement, the command and the date, and the
    growth block `curves` (written by `tools/pathological.py --curves`) before the list of
    what is not measured."""
    out = [f"<!-- Generated by `{REPORT_COMMAND}`: run it again rather than editing. -->",
           "# Evaluation", "",
           f"Measured on {facts['date']} by `{REPORT_COMMAND}` ({facts['minutes']:.0f} min): "
           f"{facts['version']}, release build; {facts['gcc']}; {facts['cores']} CPU cores.",
           "",
           "To measure again: `cargo build --release`, `python3 tools/realapps.py fetch` (once: "
           "the sources go to `~/.cache/warpwise-realapps`, never into the repository; it needs "
           "root for `apt-get source`), then "
           f"`{REPORT_COMMAND}`, which rewrites this page and the summary in README.md.",
           "", "## Accuracy on real applications", "",
           f"The {len(APPS)} OpenMP C applications `tools/realapps.py` knows, which nobody "
           "here wrote, each analysed as one program "
           "(every file given to one `warpwise analyze`). The loops their authors marked "
           "`#pragma omp parallel for` or `omp for` are parallel: the truth warpwise is "
           "measured against. Without a profile it calls them friendly, needs-profile or "
           "not-friendly; the default aliasing policy assumes that pointers a function "
           "receives do not overlap unless a call site shows otherwise, and "
           "`--aliasing call-sites` assumes only what call sites prove.", "",
           "| application | domain | files | loops | authors' loops | friendly | needs-profile "
           "| not-friendly | friendly, `--aliasing call-sites` |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        d, s = r["default"], r["strict"]
        if d["error"]:
            out.append(f"| {r['name']} | {r['domain']} | {r['files']} | failed | | | | | |")
            continue
        a = d["authors"]
        out.append(f"| {r['name']} | {r['domain']} | {r['files']} | {d['loops']} | {d['marked']} "
                   f"| {a['friendly']} | {a['needs-profile']} | {a['not-friendly']} | "
                   f"{'failed' if s['error'] else s['authors']['friendly']} |")
    counts, marked = totals(rows, "default")
    strict, _ = totals(rows, "strict")
    done = [r for r in rows if not r["default"]["error"]]
    out.append(f"| **all** | | {sum(r['files'] for r in done)} | "
               f"{sum(r['default']['loops'] for r in done)} | {marked} | "
               f"{counts['friendly']} ({percent(counts['friendly'], marked)}) | "
               f"{counts['needs-profile']} ({percent(counts['needs-profile'], marked)}) | "
               f"{counts['not-friendly']} ({percent(counts['not-friendly'], marked)}) | "
               f"{strict['friendly']} ({percent(strict['friendly'], marked)}) |")
    out += ["", "## Analysis time against `gcc -O2 -c`", "",
            "CPU time (user + system) of one `warpwise analyze` of the whole application, "
            "against the sum of `gcc -O2 -c` over its files with the same flags, each run "
            "once. Peak memory is warpwise's. Single runs on a machine shared with other work "
            "vary by tens of percent from one measurement to the next, small applications "
            "most; the totals vary least.", "",
            "| application | files | warpwise CPU s | warpwise peak MiB | gcc -O2 -c CPU s "
            "| warpwise / gcc |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in done:
        d = r["default"]
        failed = len(r["gcc_failed"])
        note = f" ({failed} file{'s' if failed > 1 else ''} gcc rejects)" if failed else ""
        out.append(f"| {r['name']} | {r['files']} | {d['cpu']:.2f} | {d['rss_kib'] // 1024} | "
                   f"{r['gcc']:.2f}{note} | {d['cpu'] / r['gcc']:.2f}x |" if r["gcc"] else
                   f"| {r['name']} | {r['files']} | {d['cpu']:.2f} | {d['rss_kib'] // 1024} | "
                   f"-{note} | - |")
    ww = sum(r["default"]["cpu"] for r in done)
    gcc = sum(r["gcc"] for r in done)
    out.append(f"| **all** | {sum(r['files'] for r in done)} | {ww:.2f} | "
               f"{max((r['default']['rss_kib'] for r in done), default=0) // 1024} | {gcc:.2f} | "
               + (f"{ww / gcc:.2f}x |" if gcc else "- |"))
    out += ["", "## Report texts", "",
            "Every string of the JSON reports above, scanned for what does not read as the "
            "program's C (`text_faults` in `tools/realapps.py`): quotes of the source "
            "(`access`, `text`, `element`, `condition`) that are fragments, unbalanced or cut "
            "at a comma; parameter types that are not C; and texts with a name qualified by "
            "the place computing its value (`n@12`, `i@f:3`), warpwise's internal way of telling "
            "two values of one variable apart, which a written report shows as the C identifier "
            "its legend defines (`n_12`, see [report-format.md](report-format.md#names)), so none "
            "should remain; the legend's entries are counted beside them; and expressions with "
            "`floor_div`/`floor_mod`, a floor the analysis could not show equal to C's `/` "
            "and `%` (the dividend's sign unknown).", "",
            "| application | texts | fragments | types not C | texts with qualified names "
            "| legend entries | texts with floor_div/floor_mod |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in done:
        t = r["default"]["texts"]
        out.append(f"| {r['name']} | {t['texts']} | {t['fragments']} | {t['types']} | "
                   f"{t['qualified']} | {t.get('legend', 0)} | {t['floors']} |")
    every = collections.Counter()
    for r in done:
        every.update(r["default"]["texts"])
    out.append(f"| **all** | {every['texts']} | {every['fragments']} | {every['types']} | "
               f"{every['qualified']} | {every['legend']} | {every['floors']} |")
    out += ["", "## Pathological code shapes", "",
            "Generated files that make analysers blow up (`tools/pathological.py`), each "
            "analysed alone: CPU time (user + system) and peak memory of `warpwise analyze`, "
            "and CPU time of `gcc -O2 -c` on the same file, stopped after "
            f"{GCC_SHAPE_TIMEOUT} s. Exit 1 is expected for "
            + ", ".join(f"`{s['case']}`" for s in shapes if s["expected_exit"] == 1)
            + ", which a budget (the parser's nesting limit, the function-body and declaration "
            "size) refuses with one diagnostic.", "",
            "| case | warpwise CPU s | warpwise peak MiB | exit | gcc -O2 -c CPU s |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for sh in shapes:
        gcc = (f"over {sh['gcc_timeout']} (stopped)" if sh["gcc_seconds"] is None
               else f"{sh['gcc_seconds']:.2f}")
        out.append(f"| `{sh['case']}` | {sh['cpu']:.2f} | {sh['kib'] // 1024} | {sh['exit']} "
                   f"| {gcc} |")
    if curves:
        out += ["", curves.rstrip("\n")]
    out += ["", "## Not measured here", ""]
    for name in missing:
        out.append(f"- {name}: not fetched (`python3 tools/realapps.py fetch {name}`).")
    out += ["- OpenMP ports of the authors' friendly loops and whether they compile: "
            "`python3 tools/realapps.py port` (needs clang-16).",
            "- CUDA kernels for them, compiled by NVRTC: `python3 tools/realapps.py port-cuda`.",
            "- File-by-file speed against gcc, best of three: `python3 tools/realapps.py speed`.",
            "- The profiler's overhead: `python3 profile/benches/overhead.py`.",
            "- Kernels on a GPU: [testing.md](testing.md#on-a-gpu).", ""]
    return "\n".join(out)


if __name__ == "__main__":
    commands = {"fetch": fetch, "measure": measure, "port": port,
                "port-cuda": port_cuda, "speed": speed, "report": report}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](set(sys.argv[2:]))
