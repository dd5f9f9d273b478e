#!/usr/bin/env bash
# GPU call 3 (second machine of the session): the 32 GiB run again with
# run 9's kernels and the pipelined prover (issue 13), then the daemon
# stage (3 proofs at once through `cuzk daemon`), in the background; this
# call waits on it, later calls run wait.sh.
set -u
out="${OUT:-/tmp}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/g32env.sh"
{ nvidia-smi; nproc; free -g; df -hT / /tmp; } > "$out/smi3.txt" 2>&1
( export OUT="$out/g32"; GROUP=5 bash .gpu-32g/gpu-32g.sh --background c1 params prove daemon )
( export OUT="$out/g32"; bash .gpu-32g/gpu-32g.sh --wait 560 )
