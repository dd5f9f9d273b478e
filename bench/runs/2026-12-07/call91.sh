#!/usr/bin/env bash
# Planned (twenty-seventh session; no device time was left to run it), H100
# is enough: the G1 accumulation
# with each thread's next point fetched into shared memory while the
# current one is added (branch g1pf: msm_accumulate_g1p, cp.async into
# two 96-byte slots a thread, 24 KB a block; sm_90 ptxas 166 registers,
# no spills, 3 blocks an SM kept; behind CUZK_G1_ACCUMULATE_PREFETCH).
# Call 90's source counters put 6.8% of the accumulation's stall samples
# on the LOP3 that waits for a loaded point's word (long scoreboard).
# Predicted: G1 rows -2..-5%.
# (1) checks msm/g1 with the switch on; (2) G1 rows 2^24 / 2^26, reps 2:
# main's .gpu/bench_kernels, then the branch's with the switch on.
# The branch is bench/runs/2026-12-07/g1pf.patch (`git am` it on a branch in a
# worktree; build gpu_tests and bench_kernels there with CUZK_CUDA_ARCHS=90
# into .carry/pf/, then `tar czf .carry/pf.tgz -C .carry pf`).
# Carry [".gpu/bench_kernels", ".carry/pf.tgz"]; run as
#   CALL_BUDGET_S=300 bash bench/runs/2026-12-07/call91.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-300}" "${OUT:-/tmp}/c91"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mkdir -p /tmp/pf && tar xzf .carry/pf.tgz -C /tmp/pf
b=/tmp/pf/pf
stamp "pf checks msm/g1"
CUZK_G1_ACCUMULATE_PREFETCH=1 timeout "$(lim 90)" $b/gpu_tests --filter msm/g1 > "$w/pf-checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/pf-checks.log" | tail -4 | cut -c1-300
export CUZK_MSM_BENCH_LOGS=24,26
g1_rows main ./.gpu/bench_kernels
CUZK_G1_ACCUMULATE_PREFETCH=1 g1_rows pf $b/bench_kernels
pack
stamp done
