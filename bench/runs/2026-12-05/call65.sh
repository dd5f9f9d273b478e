#!/usr/bin/env bash
# 2026-12-05 (nineteenth session), call 65, ran on an H100 (output in
# call65/): where an affine round's time goes, per kernel (ncu, time,
# warp instructions, DRAM bytes, warps active), at 2^24 with 2 rounds: the
# first window's first round and the start of its second. Same build as
# call 64 (.carry/affine.tgz); run inline as the `run` command, ~45 s.
mkdir -p $OUT; [ -d .gpu ] || tar -xzf .carry/affine.tgz
CUZK_MSM_AFFINE_ROUNDS=2 CUZK_MSM_BENCH_LOGS=24 timeout 150 /usr/local/cuda/bin/ncu --clock-control none --kill yes \
  -k "regex:^(msm_round_a_g1|msm_round_c_g1|msm_accumulate_g1|binv_up_g1|binv_down_g1|binv_top_g1|msm_chunk_owner|msm_merge_g1)\$" \
  --launch-count 40 --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
  ./.gpu/bench_kernels --filter msm_g1 --reps 1 > $OUT/ncu.log 2>&1
echo rc $?
