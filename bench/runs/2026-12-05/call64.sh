#!/usr/bin/env bash
# 2026-12-05 (nineteenth session), call 64: ran first on an H200 (the
# checks, output in call64/h200-checks/; the bench's filter "msm_g1 vram"
# then matched no group and was corrected to msm_g1 below), then, after a
# lost machine and a refused start, with SKIP_CHECKS=1 on an H100 (the
# rows and the profiles, output in call64/; its ncu step ran out of time,
# call 65 did it). The G1 MSM's affine rounds
# (kernels/msm_affine.cuh, device/msm_affine.rs, branch affround): every
# bucket's points halved r times by affine pair additions, each round's
# denominators inverted together (one Fermat inversion at the top of the
# levels), then the XYZZ chunk sums, window by window. Build:
# CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare -> .carry/affine.tgz
# (.gpu); carry [".carry/affine.tgz"], ~330 s plus the start.
# Checks: every kernel check, the G1 MSM cases with 1, 2 and 5 rounds in
# both G1 builds. Predicted (the card's own XYZZ row as the baseline): G1
# 2^26 -5% at r = 1, -8% at r = 2, about even at r = 4 (6.5 products an
# affine addition with the memory, against 10; run 14's batch-affine form
# came out 2x over its instruction count, so wide error bars).
set -u
. bench/runs/lib.sh 420 /tmp/affine
mkdir -p "$w/tests"
tar -xzf .carry/affine.tgz
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
stamp "kernel checks (the affine rounds in every G1 MSM case)"
[ -n "${SKIP_CHECKS:-}" ] || OUT="$w/tests" timeout "$(lim 150)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -8 | cut -c1-300
stamp "G1 MSM rows, affine rounds 1-4, 2^24 and 2^26"
CUZK_MSM_BENCH_AFFINE=1,2,3,4 CUZK_MSM_BENCH_LOGS=24,26 timeout "$(lim 170)" ./.gpu/bench_kernels --filter msm_g1 --reps 3 --json-out "$w/msm.json" > "$w/msm.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/msm.log" | cut -c1-200
stamp "phases at 2^26: XYZZ and 2 rounds"
for r in 0 2; do
  CUZK_MSM_PROFILE=1 CUZK_MSM_AFFINE_ROUNDS=$r CUZK_MSM_BENCH_LOGS=26 timeout "$(lim 60)" ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/prof-$r.log" 2>&1
  echo "rc $? (r=$r)"; grep -E "n=67108864" "$w/prof-$r.log" | head -2 | cut -c1-400
done
stamp "ncu at 2^24, 2 rounds: rounds vs the accumulation"
metrics="gpu__time_duration.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active"
CUZK_MSM_AFFINE_ROUNDS=2 CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 60)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:^(msm_round_a_g1|msm_round_c_g1|msm_accumulate_g1|binv_up_g1|binv_down_g1)\$" --launch-count 12 --metrics "$metrics" \
  ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/ncu.log" 2>&1
echo "rc $?"; grep -E "^  [a-z_0-9]+ \(|gpu__time|inst_executed|throughput|issue_active|warps_active" "$w/ncu.log" | head -80 | cut -c1-150
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
