#!/usr/bin/env bash
# Call 75 (twenty-third session): the split bucket reduction by size
# (BucketSplit::Auto: split only where its first level fills the card;
# call 74 on an H100: G1 2^24 101.56 -> 100.29 ms, 2^26 394.20 -> 392.25,
# G2 2^24 324.16 -> 317.97, but G1 2^20 8.46 -> 8.79) and the sort's
# warp-shuffle scan, on whatever card comes: (1) G1 2^20 rows (Auto should
# match bucket-tail there); (2) the prover checks; (3) the 2^27 partition
# (z prepared; in the same process also with the atomic sort and with the
# bucket reduction never split). Predicted on an H100 80GB: z prepared
# ~1470 ms against call 72's 1480.8 (H in 2 parts: ~2 x 2 ms split and
# ~2 x 2.5 ms the scan; L, A, B1 ~1.4 ms each; B2 ~6).
# Binaries: .gpu and .gpu-prover at main, carry [".gpu", ".gpu-prover"],
# ~520 s plus the start.
set -u
. bench/runs/lib.sh 570 /tmp/c75
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "rows G1 2^20"
CUZK_MSM_BENCH_LOGS=20 timeout "$(lim 40)" ./.gpu/bench_kernels --filter msm_g1 --reps 5 > "$w/rows20.log" 2>&1
echo "rc $?"; grep -E "^msm_g1 vram( sort-atomic| bucket-tail| bucket-split)? +2\^" "$w/rows20.log" | grep "ms (floor" | cut -c1-110
stamp "prover checks"
timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |capacity [0-9]+:|two workers under" "$w/checks/run.log" | tail -8 | cut -c1-300
stamp "compiled bench 27, one partition, reps 2"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|sort|unsplit|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
