#!/usr/bin/env bash
# 2026-12-05 (nineteenth session), call 67, ran on an H100 (output in call67/): evaluations to the coset with
# the inverse's last pass and the forward's first fused (branch fusedmid,
# pass mode 3), against main's kernels in the same call. Builds
# (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare): .carry/fused.tgz
# (.gpu of fusedmid), .carry/batched.tgz (main's kernels, unpacked as
# .gpu-base). carry [".carry/fused.tgz", ".carry/batched.tgz"], ~100 s.
# Predicted (H100 or H200 alike, compute-bound): evals -> coset 2^27 -3 to
# -4 ms (83.89 on the H100, run 40: one pass's load and store phases of
# six), the plain transforms unchanged; the NTT and compute_h checks pass.
set -u
. bench/runs/lib.sh 170 /tmp/fused
mkdir -p .gpu-base
tar -xzf .carry/fused.tgz
tar -xzf .carry/batched.tgz -C .gpu-base --strip-components=1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
stamp "NTT and compute_h checks (fused)"
timeout "$(lim 60)" ./.gpu/gpu_tests --filter ntt/ > "$w/checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks.log" | tail -5 | cut -c1-200
i=0
for b in gpu gpu-base gpu; do
  i=$((i + 1))
  stamp "NTT 2^27 r2x3, $b ($i)"
  CUZK_NTT_BENCH_LOGS=27 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 30)" ./.$b/bench_kernels --filter ntt --reps 5 --json-out "$w/ntt-$i-$b.json" > "$w/ntt-$i-$b.log" 2>&1
  echo "rc $?"; grep -E "ms \(floor" "$w/ntt-$i-$b.log" | cut -c1-120
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
