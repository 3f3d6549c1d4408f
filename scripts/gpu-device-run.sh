#!/usr/bin/env bash
# dpl's prepared run on a GPU machine: `cargo xtask gpu-pack` copies this script into
# target/device-pack/ as run.sh, next to release binaries built on a development machine
# (no Rust toolchain or network is needed here). Run it from the repository root:
#
#     bash target/device-pack/run.sh
#
# In order of importance, each step bounded in time so that the whole run ends within
# DPL_DEVICE_BUDGET seconds (default 360; a step that cannot get 20 s is skipped and says so):
#   1. the device as nvidia-smi reports it;
#   2. examples/gpu_bench.rs: dpl next to CUB (gpu-bench.md);
#   3. the GPU variants of the test suite (`--ignored gpu`) and dpl-cuda's driver tests
#      against the device (DPL_REQUIRE_GPU=1);
#   4. the demonstration at 2^24 elements;
#   5. the suites that loop over the places (the examples' tests among them), with the GPU
#      among the places (DPL_TEST_GPU=1).
# Results go to $OUT (default target/device-pack/out), at most 5 files: gpu-bench.md,
# summary.md (one line per step: status, seconds, tests passed/failed), demo.txt,
# logs.tar.gz (every step's full output) and run.log (this script's own). Exit status: 0
# when every step passed.

set -u -o pipefail

PACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(pwd)"
OUT="${OUT:-$PACK/out}"
BUDGET="${DPL_DEVICE_BUDGET:-360}"
START=$(date +%s)
DEADLINE=$((START + BUDGET))
LOGS="$OUT/logs"
SUMMARY="$OUT/summary.md"
mkdir -p "$LOGS"

if [ ! -f "$ROOT/Cargo.toml" ] || [ ! -d "$ROOT/dpl-cuda" ]; then
    echo "run.sh: run me from the dpl repository root (found no dpl-cuda/ in $ROOT)"
    exit 2
fi

# The binaries travel compressed (xz): unpacked into a scratch folder, the pack unchanged.
BIN="$(mktemp -d "${TMPDIR:-/tmp}/dpl-device-bin.XXXXXX")"
trap 'rm -rf "$BIN"' EXIT
for f in "$PACK"/bin/*; do
    name=$(basename "$f" .xz)
    if [ "$f" = "$PACK/bin/$name" ]; then
        cp "$f" "$BIN/$name"
    elif command -v xz >/dev/null; then
        xz -dc "$f" >"$BIN/$name"
    else
        python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as i, open(sys.argv[2], "wb") as o:
    shutil.copyfileobj(i, o)' "$f" "$BIN/$name"
    fi || { echo "run.sh: cannot unpack $f"; exit 2; }
done
chmod +x "$BIN"/*

# cuda_driver's cubin test assembles with ptxas when one is found.
if [ -z "${DPL_PTXAS:-}" ] && command -v ptxas >/dev/null; then
    export DPL_PTXAS="$(command -v ptxas)"
fi

FAILED=0
{
    echo "| step | status | seconds | tests passed | failed | ignored |"
    echo "|---|---|---:|---:|---:|---:|"
} >"$SUMMARY"

# step NAME DIR LIMIT COMMAND...: runs COMMAND in DIR for at most LIMIT seconds (less when
# the deadline is nearer), its output in $LOGS/NAME.log, and adds a line to the summary.
step() {
    local name=$1 dir=$2 limit=$3
    shift 3
    local now left
    now=$(date +%s)
    left=$((DEADLINE - now - 15))
    if [ "$left" -lt 20 ]; then
        echo "== $name: SKIPPED (the time budget is spent)"
        echo "| $name | skipped (no time left) | 0 | - | - | - |" >>"$SUMMARY"
        FAILED=1
        return
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    echo "== $name (at most ${limit} s): $*"
    local t0=$SECONDS
    (cd "$dir" && timeout --kill-after=10 "$limit" "$@") >"$LOGS/$name.log" 2>&1
    local rc=$? took=$((SECONDS - t0)) status
    case $rc in
        0) status=ok ;;
        124 | 137) status="**TIMED OUT** (${limit} s)" ;;
        *) status="**FAILED** (exit $rc)" ;;
    esac
    [ "$rc" -ne 0 ] && FAILED=1
    # Place::Gpu falls back to the CPU when the device cannot be used: then the step
    # proves nothing about the GPU.
    if grep -q 'Place::Gpu(0) is not usable' "$LOGS/$name.log"; then
        status="$status, **ran on the CPU** (the GPU was not usable)"
        FAILED=1
    fi
    # libtest's closing lines: "test result: ok. 119 passed; 0 failed; 5 ignored; ...".
    local counts
    counts=$(grep -h '^test result:' "$LOGS/$name.log" | awk '
        { for (i = 1; i <= NF; i++) {
              if ($(i+1) ~ /^passed/) p += $i
              if ($(i+1) ~ /^failed/) f += $i
              if ($(i+1) ~ /^ignored/) g += $i } }
        END { if (NR) printf "%d | %d | %d", p, f, g; else printf "- | - | -" }')
    echo "| $name | $status | $took | $counts |" >>"$SUMMARY"
    echo "   $status in ${took} s; tests passed | failed | ignored: $counts"
    grep -E '^test .* FAILED$|panicked at' "$LOGS/$name.log" | head -20
    tail -n 3 "$LOGS/$name.log"
}

main() {
    step nvidia-smi "$ROOT" 30 nvidia-smi

    # The benchmark first: it is what the device time is for. Its report is in $OUT.
    step gpu-bench "$ROOT" 200 "$BIN/gpu_bench" --out "$OUT/gpu-bench.md" \
        --lib "$BIN/libdpl_cub_bench.so"
    [ -f "$OUT/gpu-bench.md" ] && cat "$OUT/gpu-bench.md"

    # The GPU variants of the suites, in the repository root as cargo would run them.
    for t in $(cat "$PACK/gpu-tests.txt"); do
        step "test-$t" "$ROOT" 120 "$BIN/$t" --ignored gpu
    done
    # dpl-cuda's driver against the device (the stand-in driver's tests need cargo: skipped).
    if [ -x "$BIN/cuda_driver" ]; then
        step test-cuda_driver "$ROOT/dpl-cuda" 120 env DPL_REQUIRE_GPU=1 \
            "$BIN/cuda_driver" --skip fake
    fi

    step demo "$ROOT" 120 env DEMO_N=16777216 "$BIN/demo"
    [ -f "$LOGS/demo.log" ] && cp "$LOGS/demo.log" "$OUT/demo.txt"

    # Suites that loop over the places: the GPU joins them with DPL_TEST_GPU.
    for t in $(cat "$PACK/place-tests.txt"); do
        step "test-$t-places" "$ROOT" 120 env DPL_TEST_GPU=1 "$BIN/$t"
    done

    echo "| total | $([ $FAILED -eq 0 ] && echo ok || echo '**FAILED**') | $((SECONDS)) | | | |" \
        >>"$SUMMARY"
    tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
    echo
    cat "$SUMMARY"
    return $FAILED
}

main 2>&1 | tee "$OUT/run.log"
exit "${PIPESTATUS[0]}"
