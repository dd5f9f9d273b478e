#!/usr/bin/env bash
# 2026-12-03, call 6: Nsight Compute inside the MSM kernels (issue 14 item
# 1), with .gpu built from main at the merges of 2026-12-03. Call 5's ncu
# step profiled nothing: its filter "msm_g1 vram" also gates the point
# generation, which asks for "msm_g1". Sizes 2^18, 2^22, 2^24 (--shrink 2),
# both G1 builds, vram and pinned rows; then G2.
set -u
out="${OUT:-/tmp}"
NCU=/usr/local/cuda/bin/ncu
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis"
echo "== g1 $(date +%T)"
timeout 170 $NCU --clock-control none -k "regex:msm_(accumulate|reduce|bucket_reduce)_g1" --launch-count 40 $sections --csv \
    ./.gpu/bench_kernels --filter msm_g1 --shrink 2 --reps 1 > "$out/ncu-msm-g1.csv" 2> "$out/ncu-msm-g1.err"
echo "rc $?"; wc -l "$out/ncu-msm-g1.csv"; grep -E "^msm|ms \(floor" "$out/ncu-msm-g1.err" | tail -8
echo "== g2 $(date +%T)"
timeout 120 $NCU --clock-control none -k "regex:msm_(accumulate|reduce|bucket_reduce)_g2" --launch-count 12 $sections --csv \
    ./.gpu/bench_kernels --filter msm_g2 --shrink 2 --reps 1 > "$out/ncu-msm-g2.csv" 2> "$out/ncu-msm-g2.err"
echo "rc $?"; wc -l "$out/ncu-msm-g2.csv"; grep -E "ms \(floor" "$out/ncu-msm-g2.err" | tail -4
echo "== done $(date +%T)"
