#!/usr/bin/env bash
# Call 91 (twenty-eighth session, 2026-12-07): three measurements in one
# call, planned as two (91 and 88) in the twenty-seventh session.
# (1) The G1 accumulation with each thread's next point fetched into
#     shared memory while the current one is added (g1pf.patch beside this
#     script: msm_accumulate_g1p, cp.async into two 96-byte slots a
#     thread, 24 KB a block; sm_90 ptxas 166 registers, no spills, 3
#     blocks an SM kept; behind CUZK_G1_ACCUMULATE_PREFETCH). Call 90's
#     source counters put 6.8% of the accumulation's stall samples on the
#     LOP3 that waits for a loaded point's word. Predicted: G1 rows
#     -2..-5%. Checks msm/g1 with the switch on, then G1 rows 2^24 / 2^26
#     (reps 2) of main and of the branch with the switch on.
# (2) The NTT's butterflies below 2r inside a pass (CUZK_NTT_LAZY: no
#     product's final subtraction; each pass's stores reduced), built with
#     CUZK_NVCC_DEFINES=CUZK_NTT_LAZY. Predicted: 0..-3% on the 2^27 rows
#     (17 ALU instructions a butterfly fewer, the IMAD pipe's work the
#     same). Checks ntt/ of that build, then NTT rows 2^24 and 2^27 (r2x3,
#     r3x2, r2; reps 3) of main and of it.
# (3) On an H200 only, call 88's plan (the headline rows on the issue's
#     card; the NTT and G1 rows of main above serve as its NTT and G1
#     rows): the porep-like 2^27 partition with z prepared (run 46:
#     1451.5 ms; predicted ~1380), then G2 rows if time is left.
# Carry [".gpu/bench_kernels", ".carry/pf.tgz", ".carry/lazy.tgz",
# ".carry/bins.tgz"] (bins.tgz: .gpu-prover alone); run as
#   CALL_BUDGET_S=590 bash bench/runs/2026-12-07/call91.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-590}" "${OUT:-/tmp}/c91"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
mkdir -p /tmp/pf /tmp/lz && tar xzf .carry/pf.tgz -C /tmp/pf && tar xzf .carry/lazy.tgz -C /tmp/lz
b=/tmp/pf/pf
l=/tmp/lz/lazy
stamp "pf checks msm/g1"
CUZK_G1_ACCUMULATE_PREFETCH=1 timeout "$(lim 90)" $b/gpu_tests --filter msm/g1 > "$w/pf-checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/pf-checks.log" | tail -4 | cut -c1-300
export CUZK_MSM_BENCH_LOGS=24,26
g1_rows main ./.gpu/bench_kernels
CUZK_G1_ACCUMULATE_PREFETCH=1 g1_rows pf $b/bench_kernels
stamp "lazy checks ntt/"
timeout "$(lim 80)" $l/gpu_tests --filter ntt/ > "$w/lazy-checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/lazy-checks.log" | tail -4 | cut -c1-300
for n in main lazy; do
  bin=./.gpu/bench_kernels; [ $n = lazy ] && bin=$l/bench_kernels
  stamp "ntt rows, $n"
  CUZK_NTT_BENCH_LOGS=24,27 CUZK_NTT_BENCH_PASSES=r2x3,r3x2,r2 timeout "$(lim 60)" $bin --filter ntt --reps 3 > "$w/ntt-$n.log" 2>&1
  echo "rc $?"; grep -E "ms \(floor" "$w/ntt-$n.log" | grep -E "2\^27|forward out of place" | cut -c1-100
done
if [ "${mem:-0}" -gt 100000 ]; then
  tar -xzf .carry/bins.tgz
  partition27 h200 ./.gpu-prover/gpu_prover_test 200
  if [ "$(left)" -gt 70 ]; then
    stamp "rows G2, reps 1"
    timeout "$(( $(left) - 8 ))" ./.gpu/bench_kernels --filter msm_g2 --reps 1 > "$w/g2.log" 2>&1
    echo "rc $?"; grep -E "^msm_g2 vram " "$w/g2.log" | grep "ms (floor" | cut -c1-110
  fi
else
  echo "not an H200: call 88's partition and G2 rows not run"
fi
pack
stamp done
