#!/usr/bin/env bash
# Call 74 (twenty-third session): the bucket reduction split in two levels
# (70204d4: no group's double-and-add; msm_group_sums and msm_window_join
# instead) and the sort's warp-shuffle scan (1f46f13), on whatever card
# comes. (1) MSM kernel checks (every MSM case split and with the
# double-and-add, one lane and pairs, tree and chunked window sums). (2)
# The MSM rows, reps 3 (each with its bucket-tail variant: the unsplit
# reduction in the same process). (3) The G1 2^24 phases, split and not
# (CUZK_MSM_PROFILE). Predicted: the bucket reduction at c = 20 from ~10.1
# ms to ~7 (-30% of its additions, plus ~0.3 ms of second level, folds and
# join): G1 2^24 101.5 -> ~98.5 ms, 2^26 ~-3 ms; G2 2^24 about -10 ms if
# its pairs' tail weighs as much (the odd lane idles through it).
# Binaries: .gpu at 70204d4 (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh
# --prepare), carry [".gpu"], ~330 s plus the start.
set -u
. bench/runs/lib.sh 420 /tmp/c74
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "kernel checks, msm"
timeout "$(lim 170)" ./.gpu/gpu_tests --filter msm > "$w/checks/msm.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/msm.log" | tail -6 | cut -c1-300
stamp "phases G1 2^24 (split, then bucket-tail)"
CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 50)" ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/prof.log" 2>&1
echo "rc $?"; awk '/^msm profile/ {last=$0} /^msm_g1 vram( bucket-tail| sort-atomic)? +2\^/ {print; print "  " last}' "$w/prof.log" | cut -c1-260
stamp "msm rows, reps 3"
timeout "$(( $(left) - 10 ))" ./.gpu/bench_kernels --filter msm_g --reps 3 --json-out "$w/msm.json" > "$w/msm.log" 2>&1
echo "rc $?"; grep -E "^msm_g[12] vram( sort-atomic| bucket-tail)? +2\^" "$w/msm.log" | grep "ms (floor" | cut -c1-110
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
