#!/usr/bin/env bash
# 2026-12-05 (eighteenth session), call 62, ran on an H200 (output in call62/;
# the partition's timings were cut off: see bench/gpu-kernels.md run 37). Planned: the GPU prover of main
# e0f89fe (frlow's Fr product, the passes' batched loads) end to end: its
# checks, then the porep-like 2^27 partition (compiled bench, z prepared,
# two reps) as run 25 measured it on the H200 (1463.7 ms). On whichever
# card is lent (the H100 so far this session: no earlier partition figure
# on it to compare with; this one becomes the H100 reference). Binaries:
# .carry/prover-main.tgz (.gpu-prover, CUZK_CUDA_ARCHS=90 bash
# scripts/gpu-prover-test.sh --prepare). carry [".carry/prover-main.tgz"],
# ~300 s plus the start (parameters and compiled circuit ~160 s).
set -u
. bench/runs/lib.sh 300 /tmp/part-main
mkdir -p "$w/checks"
tar -xzf .carry/prover-main.tgz
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "prover checks"
timeout "$(lim 70)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/run.log" | tail -4 | cut -c1-200
stamp "compiled bench 27, one partition, reps 2"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
