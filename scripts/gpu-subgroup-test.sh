#!/usr/bin/env bash
# GPU checks and timings of the parameter loader's subgroup checks on the
# GPU (crates/cuzk-gpu/examples/gpu_subgroup_test.rs).
#
#   scripts/gpu-subgroup-test.sh --prepare
#       On a build machine (no GPU needed): builds the example with the
#       `cuda` feature and copies it, stripped, into .gpu-subgroup/
#       (git-ignored), which travels to the GPU machine. CUZK_CUDA_ARCHS=90
#       narrows the kernels to the H200 for a quicker build.
#   scripts/gpu-subgroup-test.sh [--seed N] [--log-points N] [--no-cpu]
#       On the GPU machine (no cargo there): the staged checks against
#       blstrs, a small VRAM limit, the loader with the GPU checker against
#       the CPU's on a file with a point outside in each section, then the
#       loader's timings on a file of 2^N G1 points (default 22). The last
#       line is always `N passed, M failed`; the log goes to $OUT (when
#       set) as gpu-subgroup.log.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ "${1:-}" = "--prepare" ]; then
    exec bash scripts/gpu-prepare.sh .gpu-subgroup scripts/gpu-subgroup-test.sh gpu_subgroup_test -- \
        -p cuzk-gpu --features cuda --example gpu_subgroup_test
fi

out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$out/gpu-subgroup.log"
./.gpu-subgroup/gpu_subgroup_test "$@" 2>&1 | tee -a "$out/gpu-subgroup.log"
summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/gpu-subgroup.log" | tail -1)"
[ -n "$summary" ] || summary="0 passed, 1 failed"
echo "$summary"
