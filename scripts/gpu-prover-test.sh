#!/usr/bin/env bash
# GPU checks and benchmarks of crates/cuzk-gpu (the CUDA prover backend).
#
#   scripts/gpu-prover-test.sh --prepare
#       On a build machine (no GPU needed): builds the `gpu_prover_test`
#       example with the `cuda` feature and copies it, stripped, into
#       .gpu-prover/ (git-ignored through .git/info/exclude), which travels
#       to the GPU machine. CUZK_CUDA_ARCHS=90 narrows the kernels to the
#       H200 for a quicker build.
#   scripts/gpu-prover-test.sh [gpu_prover_test args, e.g. --bench 20 --partitions 1,10]
#       On the GPU machine (no cargo there): runs the checks (conformance
#       against the CPU backend, bellperson verification, every staging plan,
#       VRAM caps, the fault hook, two workers), then the benchmarks asked
#       for. The last line is always `N passed, M failed`. Logs go to $OUT
#       (when set) as gpu-prover.log and gpu-prover.json.
#   ./.gpu-prover/h2d_bench [GIB] [REPS] [--json]
#       Host-to-device copy rates from pageable, registered (page-locked in
#       place) and cuMemHostAlloc memory (crates/cuzk-gpu/examples/h2d_bench.rs).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ "${1:-}" = "--prepare" ]; then
    exec bash scripts/gpu-prepare.sh .gpu-prover scripts/gpu-prover-test.sh gpu_prover_test h2d_bench -- \
        -p cuzk-gpu --features cuda --example gpu_prover_test --example h2d_bench
fi

out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv 2>&1 | tee "$out/gpu-prover.log"
./.gpu-prover/gpu_prover_test --json-out "$out/gpu-prover.json" "$@" 2>&1 | tee -a "$out/gpu-prover.log"
summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/gpu-prover.log" | tail -1)"
[ -n "$summary" ] || summary="0 passed, 1 failed"
echo "$summary"
