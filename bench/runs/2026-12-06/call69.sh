#!/usr/bin/env bash
# Call 69 (twenty-first session): can the 80 GB card keep the 2^27 system
# resident? Call 68 (H100, 2026-12-06 00:37) placed it Streamed: 1983.4 ms
# a partition (z prepared 1871.4), abc 347.8 ms of it; resident needed
# 48.32 + 13.32 + 23.15 = 84.79 GB of 83.86. Now the device's row starts
# are u32 (the system 1.61 GB smaller) and the H step holds the larger of
# the products' temporary and the NTT's twiddles, not both (0.81 GB).
# Predicted on the H100: Resident with the H MSM in 2 parts, ~1.62 s a
# partition (~1.50 with z prepared). On an H200 the whole card first (run
# 25: 1463.7 ms), then the budget capped at the H100's 83.86 GB.
# Kernel checks of the narrowed row starts first (gpu_tests --filter spmv),
# then the prover checks (a fixed placement check: call 68's compared two
# copies of one witness with the CPU's result for two circuits).
# Binaries: .gpu (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare)
# and .gpu-prover (... scripts/gpu-prover-test.sh --prepare), carry
# [".gpu", ".gpu-prover"], ~330 s plus the start (on an H200 also the
# NTT 2^27 forward, ~40 s).
set -u
. bench/runs/lib.sh 330 /tmp/stream-part
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "kernel checks, spmv"
timeout "$(lim 40)" ./.gpu/gpu_tests --filter spmv > "$w/checks/spmv.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/spmv.log" | tail -4 | cut -c1-300
stamp "prover checks"
timeout "$(lim 60)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |capacity [0-9]+:" "$w/checks/run.log" | tail -8 | cut -c1-300
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
if [ "${mem:-0}" -gt 100000 ]; then
    # The NTT 2^27 forward out of place on the H200 (38.22 ms on the H100,
    # run 36; target 36).
    stamp "ntt 2^27 (H200)"
    CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 40)" ./.gpu/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt.json" > "$w/ntt.log" 2>&1
    echo "rc $?"; grep -E "mul/s|ms \(floor" "$w/ntt.log" | head -10 | cut -c1-200
fi
stamp "compiled bench 27, one partition, reps 2"
limits=whole
[ "${mem:-0}" -gt 100000 ] && limits=whole,83860000000
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --vram-limits "$limits" --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z packed|z prepared|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
