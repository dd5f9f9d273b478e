#!/usr/bin/env bash
# Built the binaries of calls 54-56 (2026-12-05; planned as fp64-prepare.sh for
# fp64-a.sh .. fp64-c.sh; fp64-a.sh ran as call 54, the others were replaced
# by calls 55 and 56) on the dev machine, no GPU, ~10 minutes on 2 cores:
# the kernel checks and benchmarks and the
# GPU prover, each with the default kernels and with both FP64 mixes, for
# sm_90 only; then .carry/bins.tgz (.gpu, .gpu-mix) and .carry/prover.tgz
# (.gpu-prover, .gpu-prover-mix). Both builds share target/: each one
# rebuilds the kernels (build.rs reruns when CUZK_NVCC_DEFINES changes).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export CUZK_CUDA_ARCHS=90
mix=CUZK_FP64_MIX_FQ,CUZK_FP64_MIX_FR
unset CUZK_NVCC_DEFINES
bash scripts/gpu-test.sh --prepare
bash scripts/gpu-prover-test.sh --prepare
CUZK_NVCC_DEFINES=$mix bash scripts/gpu-prepare.sh .gpu-mix scripts/gpu-test.sh \
    gpu_tests bench_kernels -- -p cuzk-cuda --features cuda --examples
CUZK_NVCC_DEFINES=$mix bash scripts/gpu-prepare.sh .gpu-prover-mix scripts/gpu-prover-test.sh \
    gpu_prover_test h2d_bench -- -p cuzk-gpu --features cuda --example gpu_prover_test --example h2d_bench
mkdir -p .carry
tar -czf .carry/bins.tgz .gpu .gpu-mix
tar -czf .carry/prover.tgz .gpu-prover .gpu-prover-mix
ls -l .carry
