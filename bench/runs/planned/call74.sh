#!/usr/bin/env bash
# Call 74 (planned after the twenty-second session), on an H200: (1) the
# MSM rows with the
# staged shared-memory sort against the atomic one (call 70 on an H100:
# G1 2^24 104.52 -> 102.00 ms, 2^26 400.81 -> 396.42, G2 2^24 326.97 ->
# 324.50; the H200's standing figures: G1 2^26 394.9, 2^24 103.2, G2 2^24
# 324.8 with the atomic sort); (2) the 2^27 partition on the whole H200
# with the shared sort
# (predicted ~1447 ms z prepared against run 43's 1460.2; the bench also
# runs the atomic sort in the same process).
# (Call 72 ran this with an ncu step on an H100 when asked for an H200.)
# Binaries: .gpu and .gpu-prover rebuilt at main (the shared sort is the
# default; the rows and the bench carry the atomic one too), carry [".gpu",
# ".gpu-prover"], ~420 s plus the start.
set -u
. bench/runs/lib.sh 450 /tmp/c74
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "msm rows, reps 3"
timeout "$(lim 150)" ./.gpu/bench_kernels --filter msm_g --reps 3 --json-out "$w/msm.json" > "$w/msm.log" 2>&1
echo "rc $?"; grep -E "^msm_g[12] vram( sort-atomic| sort-shared-unstaged)? +2\^" "$w/msm.log" | grep "ms (floor" | cut -c1-110
stamp "compiled bench 27, whole H200, reps 2 (shared sort; atomic too)"
CUZK_MSM_SORT=shared timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|sort|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
