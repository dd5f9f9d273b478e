#!/usr/bin/env bash
# Call 105 (2026-12-07, thirty-fourth session): issue 14's item 3, the
# tuning constants never swept (bench/gpu-kernels.md run 63's audit).
# Carry [".carry/sweep.tgz"] (.gpu: bench_kernels and gpu_tests at this
# commit's kernels; .gpu-p16: bench_kernels built with
# CUZK_NVCC_DEFINES=MSM_SORT_STAGE_PER_THREAD=16). Points kept between
# processes on the device's disk (CUZK_BENCH_POINTS_DIR), removed at the end.
# Build here (PATH with .cuda's nvcc), the 16-a-thread build last (it
# recompiles the kernels in target/):
#   CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare
#   CUZK_CUDA_ARCHS=90 CUZK_NVCC_DEFINES=MSM_SORT_STAGE_PER_THREAD=16 bash scripts/gpu-prepare.sh \
#     .gpu-p16 scripts/gpu-test.sh bench_kernels -- -p cuzk-cuda --features cuda --example bench_kernels
#   tar czf .carry/sweep.tgz .gpu .gpu-p16
# (0) the G1 MSM checks under two sort geometries (CUZK_MSM_SORT_TUNING).
# (1) G1 at 2^20, 2^22, 2^23, 2^24, 2^26: every variant row, the windows
#     c-3..c+3 around choose_window's (the rule's last sweep, runs 19-20,
#     predates the shared sort, the split reduction, Karatsuba and the
#     load's chunk), the sort geometries below (each sum checked against
#     the default's), and the 0/1 sum's builds (DEFAULT_ZERO_ONE_INLINE
#     rests on run 20; run 51 had the out-of-line one faster on an H100).
# (2) the same sort rows from the build whose staged passes hold 16
#     entries a thread (runs twice as long per stage; more registers).
# (3) NTT 2^27 with other pass splits and lgL bounds, then the 2^27
#     round-trip checks under the two splits predicted best.
# Predictions: the sort is ~8% of a G1 MSM (8.1 of 93.6 ms at 2^24, H100),
# its passes waiting on memory (run 44); longer runs per stage should cut
# the buckets pass's partial-sector writes: p16 at 96 KiB -0.5..-2% of the
# MSM if occupancy holds. NTT: the passes are compute bound (run 51), so
# the splits should move the rows by < 2%; 11,8,8 trades a first pass of
# 11 stages (no strided groups) for later passes with 256-byte runs.
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c105"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
tar -xzf .carry/sweep.tgz
export CUZK_BENCH_POINTS_DIR=/tmp/cuzk-points
mkdir -p "$CUZK_BENCH_POINTS_DIR"
sorts="256:10:48:8,128:10:48:8,512:11:48:8,256:11:48:8,512:9:64:8,512:10:48:4"
# (0) correctness first: the G1 MSM checks (sizes 0..2^16+3 and large,
#     zero/one/-1 scalars, repeated points, infinity, P/-P) under two of
#     the geometries, the default build and the 16-a-thread one's kernels
#     through the default build's checks.
for t in 256:11:48:8 512:9:64:8; do
  stamp "MSM checks under sort geometry $t"
  CUZK_MSM_SORT_TUNING=$t timeout "$(lim 60)" ./.gpu/gpu_tests --filter msm/g1 > "$w/check-sort-$t.log" 2>&1
  echo "rc $?"; grep -E "passed|FAIL" "$w/check-sort-$t.log" | tail -3
done
stamp "G1 rows, windows, sort geometries, 0/1 sums (reps 2)"
CUZK_MSM_BENCH_LOGS=20,22,23,24,26 CUZK_MSM_BENCH_WINDOWS=auto CUZK_MSM_BENCH_SORT_TUNINGS="$sorts" \
  timeout "$(lim 250)" ./.gpu/bench_kernels --filter _g1 --reps 2 > "$w/g1.log" 2>&1
echo "rc $?"; grep -E "ms \(floor|WRONG|not run" "$w/g1.log" | grep -E "sort|sum_selected|c=|WRONG|not run|vram  " | cut -c1-100
stamp "sort geometries, 16 entries a thread (reps 2)"
CUZK_MSM_BENCH_LOGS=24,26 CUZK_MSM_BENCH_SORT_TUNINGS="512:10:96:16,512:10:80:16,256:10:48:16,512:11:96:16,512:9:96:16,512:10:48:12" \
  timeout "$(lim 90)" ./.gpu-p16/bench_kernels --filter "msm_g1 sort" --reps 2 > "$w/g1-p16.log" 2>&1
echo "rc $?"; grep -E "ms \(floor|WRONG|not run" "$w/g1-p16.log" | cut -c1-100
rm -rf "$CUZK_BENCH_POINTS_DIR"
for cfg in default 11,8,8:3 11,8,8:2 10,9,8:2 11,9,7:2 10,10,7:1 9,9,9:1 9,9,9:0; do
  [ "$(left)" -lt 40 ] && { echo "skipped NTT $cfg: $(left) s left"; continue; }
  stamp "NTT 2^27, split $cfg"
  if [ "$cfg" = default ]; then
    CUZK_NTT_BENCH_LOGS=27 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 40)" ./.gpu/bench_kernels --filter ntt --reps 3 > "$w/ntt-$cfg.log" 2>&1
  else
    CUZK_NTT_SPLIT="${cfg%:*}" CUZK_NTT_LGL_MAX="${cfg#*:}" CUZK_NTT_BENCH_LOGS=27 CUZK_NTT_BENCH_PASSES=r2x3 \
      timeout "$(lim 40)" ./.gpu/bench_kernels --filter ntt --reps 3 > "$w/ntt-$cfg.log" 2>&1
  fi
  echo "rc $?"; grep -E "ms \(floor" "$w/ntt-$cfg.log" | cut -c1-90
done
for cfg in 11,8,8:3 10,9,8:2; do
  [ "$(left)" -lt 30 ] && break
  stamp "NTT 2^27 round trips under split $cfg"
  CUZK_NTT_SPLIT="${cfg%:*}" CUZK_NTT_LGL_MAX="${cfg#*:}" timeout "$(lim 60)" ./.gpu/gpu_tests --large --filter "2^27 round trips" > "$w/check-$cfg.log" 2>&1
  echo "rc $?"; grep -E "passed|FAIL" "$w/check-$cfg.log" | tail -3
done
pack
stamp done
