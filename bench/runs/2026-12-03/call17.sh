#!/usr/bin/env bash
# 2026-12-03 (fourth session), call 17: main after the merges (s12: compiled
# systems streamed in row blocks; nttc: every field's final subtraction as
# a borrow chain, NTT pass r2x3 the default), binaries .gpu
# (gpu-test.sh --prepare), .gpu-prover and .gpu-daemon built from main with
# CUZK_CUDA_ARCHS=90:
#   1. every kernel check (gpu_tests), and the --large 2^27 NTT round trips
#   2. every GPU prover check (gpu_prover_test), the streamed ones new
#   3. kernel rows at the defaults: G1 MSM 2^20/2^24/2^26 (every form), G2
#      2^24, the 0/1 sum, NTT 2^20-2^27 (r2x3 and r3x2)
#   4. the daemon, porep-like-20 x 200 jobs (--quick), if time is left
# Logs go to one tarball ($OUT/logs.tgz: the device tool brings back only
# so many files).
set -u
out="${OUT:-/tmp}"
w=/tmp/call17; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((540 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv > "$w/gpu.txt" 2>&1
stamp "kernel checks"
mkdir -p "$w/tests"
OUT="$w/tests" timeout "$(lim 200)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^(FAIL|PANIC)|passed, " "$w/tests/run.log" | tail -8 | cut -c1-300
timeout "$(lim 40)" ./.gpu/gpu_tests --large --filter "ntt/2^27 round trips" > "$w/tests/ntt27.log" 2>&1
echo "rc $?"; grep -E "^(FAIL|PANIC)|passed, " "$w/tests/ntt27.log" | cut -c1-300
stamp "prover checks"
mkdir -p "$w/prover"
OUT="$w/prover" timeout "$(lim 170)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|streamed|passed, " "$w/prover/run.log" | tail -14 | cut -c1-200
stamp "kernel rows"
timeout "$(lim 90)" ./.gpu/bench_kernels --filter "msm_g1 vram" --reps 2 --json-out "$w/g1.json" > "$w/g1.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g1.log" | cut -c1-72
timeout "$(lim 25)" ./.gpu/bench_kernels --filter "msm_g2 vram" --reps 2 --json-out "$w/g2.json" > "$w/g2.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g2.log" | grep "2\^24" | cut -c1-72
timeout "$(lim 20)" ./.gpu/bench_kernels --filter "sum_selected" --reps 3 --json-out "$w/sum01.json" > "$w/sum01.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/sum01.log" | cut -c1-72
CUZK_NTT_BENCH_PASSES=r2x3,r3x2 timeout "$(lim 40)" ./.gpu/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt.json" > "$w/ntt.log" 2>&1
echo "rc $?"; grep -E "mul/s|ms \(floor" "$w/ntt.log" | cut -c1-72
if [ -x .gpu-daemon/cuzk ] && [ "$(left)" -gt 60 ]; then
  stamp "daemon --quick"
  mkdir -p "$w/daemon"
  OUT="$w/daemon" timeout "$(( $(left) - 5 ))" bash .gpu-daemon/gpu-daemon-bench.sh --quick > "$w/daemon/run.log" 2>&1
  echo "rc $?"; grep -E "proofs_per_min|gpu_busy|passed|failed|verified" "$w/daemon/run.log" | tail -12 | cut -c1-200
fi
stamp done
tar -C "$w" -czf "$out/logs.tgz" . && ls -la "$out"
