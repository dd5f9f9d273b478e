#!/usr/bin/env bash
# Call 70 (twenty-first session): the 2^27 partition on an H100 80GB
# itself, after call 69 placed it Resident with the H MSM in 2 parts under
# the H100's 83.86 GB on an H200 (1598.6 ms, z prepared 1475.5; pool high
# 79.28 GB). Call 68 on the H100 (before the narrower row starts):
# Streamed, 1983.4 ms (z prepared 1871.4). Predicted: Resident, H in 2
# parts, ~1.60 s (~1.48 prepared). The prover checks first (the placement
# check's requirement on PartitionReport.h_msm_parts, d8c246c, is not yet
# run on a GPU). Binaries: .gpu-prover (CUZK_CUDA_ARCHS=90 bash
# scripts/gpu-prover-test.sh --prepare), carry [".gpu-prover"], ~240 s.
set -u
. bench/runs/lib.sh 290 /tmp/stream-part
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "prover checks"
timeout "$(lim 60)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |capacity [0-9]+:|two workers under" "$w/checks/run.log" | tail -8 | cut -c1-300
stamp "compiled bench 27, one partition, reps 2"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z packed|z prepared|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
