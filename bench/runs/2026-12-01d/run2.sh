#!/usr/bin/env bash
# GPU call 2: the GPU prover checks on the new kernels (while the 32 GiB
# run's parameters finish or its prove stage loads them on the CPU), then
# waits on the 32 GiB run.
set -u
out="${OUT:-/tmp}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - start) )); }
. "$here/g32env.sh"
( export OUT="$out/g32"; bash .gpu-32g/gpu-32g.sh --status ) | tail -n 8
echo "== prover $(date +%T)"
OUT="$out" timeout 200 bash .gpu-prover/gpu-prover-test.sh > "$out/prover.log" 2>&1
grep -E "^FAIL|passed, " "$out/prover.log" | tail -8
echo "== 32g wait $(date +%T) ($(left) s left)"
( export OUT="$out/g32"; bash .gpu-32g/gpu-32g.sh --wait $(( $(left) - 10 )) )
echo "== done $(date +%T)"
