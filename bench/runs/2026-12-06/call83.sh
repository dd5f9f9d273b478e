#!/usr/bin/env bash
# Planned first call of the next session with device time (written in the
# twenty-fifth session, 2026-12-06, which had 50 s of device time: its
# predecessor's CI failed, so no fresh minutes). Main's .gpu and
# .gpu-prover built at 22dc6d2's code without CUZK_NVCC_DEFINES (at the
# end of that session; rebuild them if the kernels change before the
# call); .carry/g1k.tgz (bench_kernels and
# gpu_tests, 13 MB) built with
# CUZK_NVCC_DEFINES=CUZK_G1I_KARA,CUZK_G1I_CAP=3 (bench/gpu-kernels.md run
# 50: the inline G1 build with the Karatsuba product capped at 3 blocks an
# SM; ~9% fewer IMAD-pipe units a mixed addition than the out-of-line
# calls, 51 spill instructions). The prover checks passed at 5a79805 (call
# 82) and the kernels have not changed since (cuzk.cu's sm_90 SASS
# byte-identical), so they are not rerun here.
# (0) g1k's G1 MSM and 0/1 checks (its inline kernels against blstrs;
#     seconds). A failure there voids its rows.
# (1) G1 rows, reps 2, both builds in the same call: main's `msm_g1 vram`
#     (out of line, default) and `msm_g1 vram inline-fq` against g1k's
#     `inline-fq` row. Predicted: g1k's inline row 3-6% under main's
#     default row (2^24 ~93.5 -> ~89 ms on an H100) if the spills stay in
#     L1; slower if they do not.
# (2) The porep-like 2^27 partition (z prepared, reps 2; ~300 s with its
#     parameter generation), never measured with the Karatsuba product:
#     predicted ~1451 -> ~1400 ms on an H200 (H MSM 756 -> ~710), ~1474 ->
#     ~1420 on an H100 80GB (call 75 / call 77's main on those kinds).
# (3) If time is left: the 0/1 sum rows of both builds (g1k's
#     sum_selected_g1i takes the Karatsuba product uncapped: 204 registers).
# Carry [".gpu/bench_kernels", ".gpu-prover", ".carry/g1k.tgz"]; run as
#   CALL_BUDGET_S=585 bash bench/runs/planned/call83.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-585}" "${OUT:-/tmp}/c83"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
tar xzf .carry/g1k.tgz -C .carry
stamp "g1k checks: msm/g1, sum_selected/g1"
timeout "$(lim 60)" ./.carry/g1k/gpu_tests --filter msm/g1 > "$w/g1k-checks-msm.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/g1k-checks-msm.log" | tail -4 | cut -c1-300
timeout "$(lim 60)" ./.carry/g1k/gpu_tests --filter sum_selected/g1 > "$w/g1k-checks-zero.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/g1k-checks-zero.log" | tail -4 | cut -c1-300
for b in main g1k; do
  bin=./.gpu/bench_kernels; [ $b = g1k ] && bin=./.carry/g1k/bench_kernels
  stamp "rows G1, $b, reps 2"
  timeout "$(lim 80)" $bin --filter msm_g1 --reps 2 --json-out "$w/g1-$b.json" > "$w/g1-$b.log" 2>&1
  echo "rc $?"; grep -E "^msm_g1 vram" "$w/g1-$b.log" | grep "ms (floor" | cut -c1-110
done
stamp "compiled bench 27, reps 2"
if [ "$(left)" -gt 290 ]; then
  timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
  echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|sort|unsplit|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
else
  echo "skipped: $(left) s left, the partition needs ~300 (parameter generation, compile, runs)"
fi
for b in main g1k; do
  bin=./.gpu/bench_kernels; [ $b = g1k ] && bin=./.carry/g1k/bench_kernels
  stamp "rows 0/1 sum, $b, reps 2"
  if [ "$(left)" -gt 30 ]; then
    timeout "$(lim 40)" $bin --filter sum_selected_g1 --reps 2 > "$w/sum-$b.log" 2>&1
    echo "rc $?"; grep -E "^sum_selected_g1" "$w/sum-$b.log" | grep "ms (floor" | cut -c1-110
  fi
done
stamp done
