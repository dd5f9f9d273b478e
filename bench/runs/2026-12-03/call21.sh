#!/usr/bin/env bash
# Prepared 2026-12-03 (fifth session), to run in the next session: branch
# phases (issue 16 item 4): CudaBackend::prove_partition_in as a sequence
# of named phases (spawn_host_prep, admit, mirror_for, compute_h,
# h_coeffs_for_msm, msm_h, join_host_prep, msm_query, msm_b_g2; the MSMs'
# bases in backend/query.rs). No behaviour change: every GPU prover check
# must pass and the host-path figures must match main's within noise.
# Binaries: `CUZK_CUDA_ARCHS=90 scripts/gpu-prover-test.sh --prepare` on
# the branch.
set -u
out="${OUT:-/tmp}"
w=/tmp/call21; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((240 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "prover checks"
mkdir -p "$w/prover"
OUT="$w/prover" timeout "$(lim 120)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "compiled bench 24 (its host path is prove_partition_in)"
timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench|device path|host path|streamed|passed, " "$w/bench24.log" | cut -c1-300
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
