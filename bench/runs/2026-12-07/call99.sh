#!/usr/bin/env bash
# Call 99 (planned 2026-12-07, thirty-second session): do the NTT passes'
# blocks move their tiles in step? Main at e65ff81 or later (ntt_stagger).
# (1) NTT r2x3 at 2^24 and 2^27, reps 5, each pass's first wave started
#     with the S blocks of each SM spread over 0, 15, 30, 50 and 75 us
#     (slot s starts s * spread / S later; CUZK_NTT_BENCH_STAGGER).
#     Predicted: if the blocks of an SM stay in step (they start together
#     and do equal work), their loads and stores leave the IMAD pipe idle
#     ~10-17% of a pass (run 36: pipe 76% busy), and a spread near one
#     tile's time on a shared SM (~77 us at 2^27, ~36 at 2^24) takes some
#     of that back: forward out of place 2^27 38.2 -> ~36 ms on an H100;
#     no change if they already drift apart.
# (2) the NTT checks with the stagger on (50 us);
# (3) G1 2^22 with the chunk rule's T = 256 against T = 64 (never measured).
# Binaries: .gpu at main (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh
# --prepare). Carry [".gpu/bench_kernels", ".gpu/gpu_tests"]; run as
#   CALL_BUDGET_S=<at most 240> bash bench/runs/planned/call99.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-240}" "${OUT:-/tmp}/c99"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "NTT r2x3, staggered starts"
CUZK_NTT_BENCH_PASSES=r2x3 CUZK_NTT_BENCH_LOGS=24,27 CUZK_NTT_BENCH_STAGGER=0,15000,30000,50000,75000 \
  timeout "$(lim 120)" ./.gpu/bench_kernels --filter ntt --reps 5 > "$w/ntt-stagger.log" 2>&1
echo "rc $?"; grep -E "^ntt .* ms \(floor" "$w/ntt-stagger.log" | cut -c1-90
stamp "NTT checks, stagger 50 us"
CUZK_NTT_STAGGER_NS=50000 timeout "$(lim 60)" ./.gpu/gpu_tests --filter ntt > "$w/checks-ntt.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-ntt.log" | tail -4 | cut -c1-300
for t in 64 256; do
  [ "$(left)" -gt 30 ] || break
  stamp "G1 2^22, chunk $t"
  CUZK_MSM_CHUNK=$t CUZK_MSM_BENCH_LOGS=22 timeout "$(lim 40)" ./.gpu/bench_kernels --filter msm_g1 --reps 3 > "$w/g1-22-t$t.log" 2>&1
  echo "rc $?"; grep -E "^msm_g1 vram +2" "$w/g1-22-t$t.log" | cut -c1-90
done
pack
stamp done
