#!/usr/bin/env bash
# Planned (2026-12-04, twelfth session; not run). Third call measuring
# field_f64.cuh, after fp64-a.sh and fp64-b.sh: the GPU prover with the
# mix build, against issue 14's 1.2 s a partition (carry
# [".carry/prover.tgz"]; fp64-prepare.sh builds it). Carried as
# .carry/prover.tgz, CUZK_CUDA_ARCHS=90:
#   .gpu-prover      scripts/gpu-prover-test.sh --prepare (default kernels)
#   .gpu-prover-mix  CUZK_NVCC_DEFINES=CUZK_FP64_MIX_FQ,CUZK_FP64_MIX_FR
#                    scripts/gpu-prepare.sh .gpu-prover-mix
#                    scripts/gpu-prover-test.sh gpu_prover_test h2d_bench --
#                    -p cuzk-gpu --features cuda --example gpu_prover_test
#                    --example h2d_bench
#   (Both builds cache-share target/: build one, copy, then the other.)
#   1. porep-like 2^27, z prepared, one partition, the mix build (last
#      measured with the default kernels, run 25: 1463.7 ms: H 257.5, msm h
#      765.2 / l 137.0 / a 139.6 / b1 31.5 / b2 92.5). Predicted: the MSMs
#      ~0.8x (G1 ~1.25x faster, G2 ~1.25x), H's six NTTs ~0.85x: ~1.2-1.25
#      s.
#   2. The mix build's prover checks (conformance against the CPU backend,
#      bellperson verification, every staging plan, the fault hook).
#   3. The default build's partition if time is left.
set -u
. bench/runs/lib.sh 580 /tmp/fp64c
mkdir -p "$w/checks"
tar -xzf .carry/prover.tgz
stamp "gpu-prover-mix: compiled bench 27, one partition"
timeout "$(lim 200)" ./.gpu-prover-mix/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/mix-27.json" > "$w/mix-27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|H steps|FAIL|passed" "$w/mix-27.log" | grep -v "^ok" | cut -c1-400
stamp "prover checks, mix build"
timeout "$(lim 200)" ./.gpu-prover-mix/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/run.log" | tail -6 | cut -c1-200
# The default build's partition if time is left (else run 25's 1463.7 ms
# is the reference, measured on another machine of the same kind).
if [ "$(left)" -gt 200 ]; then
    stamp "gpu-prover: compiled bench 27, one partition"
    timeout "$(lim 200)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/default-27.json" > "$w/default-27.log" 2>&1
    echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|H steps|FAIL|passed" "$w/default-27.log" | grep -v "^ok" | cut -c1-400
fi
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
