#!/usr/bin/env bash
# 2 KiB PoRep C2 on the GPU: cuzk's CUDA prover against filecoin-proofs'
# seal_commit_phase2 (bellperson on the CPU), every cuzk proof checked by
# filecoin-proofs' verify_seal (crates/cuzk-filecoin/examples/porep_c2_bench.rs).
#
#   scripts/gpu-filecoin-bench.sh --prepare
#       On a build machine (no GPU needed): builds the example with the
#       `cuda` feature of cuzk-gpu and copies it, stripped, into .gpu-fil/
#       (git-ignored through .git/info/exclude), which travels to the GPU
#       machine. CUZK_CUDA_ARCHS=90 narrows the kernels to the H200.
#   scripts/gpu-filecoin-bench.sh [porep_c2_bench args, e.g. --repeat 3]
#       On the GPU machine (no cargo there): seals a 2 KiB sector, generates
#       the parameters on the GPU, proves with `--backend cuda` and with
#       filecoin-proofs. Logs go to $OUT (when set) as gpu-filecoin.log and
#       gpu-filecoin.json. The last line is `ok` or `FAILED (exit N)`.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ "${1:-}" = "--prepare" ]; then
    exec bash scripts/gpu-prepare.sh .gpu-fil scripts/gpu-filecoin-bench.sh porep_c2_bench -- \
        -p cuzk-filecoin --features cuzk-gpu/cuda --example porep_c2_bench
fi

out="${OUT:-/tmp}"
params="${CUZK_FIL_PARAMS:-/tmp/cuzk-fil-params}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/gpu-filecoin.log"
./.gpu-fil/porep_c2_bench --backend cuda --params "$params" --json "$out/gpu-filecoin.json" "$@" 2>&1 | tee -a "$out/gpu-filecoin.log"
rc=${PIPESTATUS[0]}
if [ "$rc" = 0 ]; then echo ok; else echo "FAILED (exit $rc)"; fi
exit "$rc"
