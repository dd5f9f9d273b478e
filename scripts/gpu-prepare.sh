#!/usr/bin/env bash
# The `--prepare` step of the GPU scripts (gpu-test.sh, gpu-prover-test.sh,
# gpu-filecoin-bench.sh), run on a build machine with no GPU: builds release
# examples with the pinned nvcc (scripts/install-nvcc.sh), then copies them,
# stripped, and the calling script into a git-ignored folder that travels to
# the GPU machine.
#
#   scripts/gpu-prepare.sh DIR SCRIPT EXAMPLE... -- CARGO_BUILD_ARGS...
#
# CUZK_CUDA_ARCHS=90 narrows the kernels to the H200 for a quicker build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

usage() {
    echo "usage: scripts/gpu-prepare.sh DIR SCRIPT EXAMPLE... -- CARGO_BUILD_ARGS..." >&2
    exit 2
}
[ $# -ge 2 ] || usage
dir="$1"
script="$2"
shift 2
examples=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    examples+=("$1")
    shift
done
[ "${1:-}" = "--" ] && [ ${#examples[@]} -gt 0 ] || usage
shift

nvcc_bin="$(bash scripts/install-nvcc.sh | tail -n 1)"
export PATH="$nvcc_bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cargo build --release "$@"
mkdir -p "$dir"
for b in "${examples[@]}"; do
    cp "$CARGO_TARGET_DIR/release/examples/$b" "$dir/"
    strip "$dir/$b"
done
cp "$script" "$dir/"
ls -l "$dir"
