#!/usr/bin/env bash
# Call 70 (twenty-second session): the shared-memory MSM sort with staged
# passes (fe99590: each stage of entries ordered by part / bucket in shared
# memory, then written as runs) against the atomic sort (the default) and
# the unstaged shared sort (call 32 on 2026-12-04: msm_sort_place 6.94 ms,
# 5.8 GB DRAM; msm_sort_buckets 9.17 ms, 9.08 GB at 2^24, their stores
# scattered). Predicted for G1 2^24 (13 windows, 2.2e8 entries): place ~2
# ms and buckets ~3 ms (about the entries' own traffic, 2.6 + 4.4 GB, at
# ~2.5 TB/s), the sort ~6 ms against the atomic's ~10: rows G1 2^24
# 103 -> ~99 ms, G1 2^26 395 -> ~375, G2 2^24 325 -> ~321.
# Kernel checks first (every MSM case with the atomic sort, the staged
# shared sort, the unstaged one and the copying merge), then the rows (each
# with its sort-shared-staged / sort-shared-unstaged variants), then the
# phases at 2^26 (CUZK_MSM_PROFILE) of each sort.
# Binaries: .gpu (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare),
# carry [".gpu"], ~330 s plus the start.
set -u
. bench/runs/lib.sh 400 /tmp/c70
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "kernel checks, msm"
timeout "$(lim 150)" ./.gpu/gpu_tests --filter msm > "$w/checks/msm.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/msm.log" | tail -6 | cut -c1-300
stamp "msm rows, reps 3"
timeout "$(lim 150)" ./.gpu/bench_kernels --filter msm_g --reps 3 --json-out "$w/msm.json" > "$w/msm.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/msm.log" | cut -c1-120
stamp "phases at 2^26 and 2^24 (G1), each sort"
CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_LOGS=24,26 timeout "$(lim 80)" ./.gpu/bench_kernels --filter "msm_g1 vram" --reps 1 > "$w/prof.log" 2>&1
echo "rc $?"; grep -E "n=(16777216|67108864)" "$w/prof.log" | head -12 | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
