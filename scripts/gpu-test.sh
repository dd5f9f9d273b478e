#!/usr/bin/env bash
# GPU tests of crates/cuzk-cuda.
#
#   scripts/gpu-test.sh --prepare
#       On a build machine (no GPU needed): builds the `gpu_tests` and
#       `bench_kernels` examples with the `cuda` feature and copies them,
#       stripped, into .gpu/ (git-ignored), which travels to the GPU machine.
#   scripts/gpu-test.sh [--large] [--seed N] [--filter TEXT] [--bench [bench args]]
#       On the GPU machine (no cargo there): runs .gpu/gpu_tests (every kernel
#       against blstrs on fresh seeded random inputs), then, with --bench, the
#       kernel benchmarks; the last line is always `N passed, M failed`.
#       Logs go to $OUT (when set) as gpu-tests.log and bench.log.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ "${1:-}" = "--prepare" ]; then
    exec bash scripts/gpu-prepare.sh .gpu scripts/gpu-test.sh gpu_tests bench_kernels -- \
        -p cuzk-cuda --features cuda --examples
fi

test_args=()
bench=0
bench_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --bench) bench=1; shift; bench_args=("$@"); break ;;
        *) test_args+=("$1"); shift ;;
    esac
done

out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee "$out/gpu-tests.log"
./.gpu/gpu_tests "${test_args[@]}" 2>&1 | tee -a "$out/gpu-tests.log"
summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/gpu-tests.log" | tail -1)"
[ -n "$summary" ] || summary="0 passed, 1 failed"
if [ "$bench" = 1 ]; then
    ./.gpu/bench_kernels --json-out "$out/bench.json" "${bench_args[@]}" 2>&1 | tee "$out/bench.log"
fi
echo "$summary"
