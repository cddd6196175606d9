#!/bin/sh
# profile_slowdown.sh -- slowdown of profiled runs against plain runs on the samples.
#
# Usage: profile/benches/profile_slowdown.sh [path/to/warpwise]
# Builds each sample plain (cc -O2) and instrumented (warpwise profile --cflags -O2, with
# --loops none: counting only, and --loops all: every loop tracked for dependences), runs
# each binary five times with the given input and prints the best wall times and ratios
# (five: the plain runs take a few milliseconds and vary a lot on a shared machine).
set -eu
W=${1:-target/release/warpwise}
S=$(cd "$(dirname "$0")/../../samples" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

best() { # best of five wall-clock runs of "$@", in milliseconds
    b=""
    for _ in 1 2 3 4 5; do
        s=$(date +%s%N)
        WARPWISE_PROFILE="$T/p.yaml" "$@" >/dev/null
        e=$(date +%s%N)
        t=$(( (e - s) / 1000 ))
        if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
    done
    rm -f "$T"/p.yaml*
    echo "$b"
}

printf '%-18s %-9s %10s %10s %7s %10s %7s\n' sample input plain_ms count_ms ratio deps_ms ratio
for row in "prefix_sum 2000000" "dot_product 2000000" "histogram 2000000" \
           "every_fourth_add 2000000" "matrix_add -" "signal_conv1d -" "conv2d_rgb -" \
           "matmul -" "jacobi2d -"; do
    set -- $row
    name=$1; arg=$2
    [ "$arg" = "-" ] && arg=""
    cc -O2 -o "$T/plain" "$S/$name.c" -lm
    "$W" profile --cflags -O2 --loops none --keep "$T/count" -o "$T/x.yaml" "$S/$name.c" -- $arg >/dev/null 2>&1
    "$W" profile --cflags -O2 --loops all --keep "$T/deps" -o "$T/x.yaml" "$S/$name.c" -- $arg >/dev/null 2>&1
    p=$(best "$T/plain" $arg)
    c=$(best "$T/count/program" $arg)
    d=$(best "$T/deps/program" $arg)
    printf '%-18s %-9s %10.1f %10.1f %7.2f %10.1f %7.1f\n' "$name" "${arg:-default}" \
        "$(echo "$p/1000" | bc -l)" "$(echo "$c/1000" | bc -l)" "$(echo "$c/$p" | bc -l)" \
        "$(echo "$d/1000" | bc -l)" "$(echo "$d/$p" | bc -l)"
done
