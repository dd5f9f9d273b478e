#!/usr/bin/env bash
# 2026-12-04 (ninth session), call 41. Binaries at main + H's finish fused
# (c's inverse left bit-reversed and unscaled; one permutation back that
# scales both inverses and subtracts: `h_finish_bitrev`, the separate c
# permutation and the subtraction pass gone) + the 0/1 form made in two
# passes into memory allocated once, CUZK_CUDA_ARCHS=90; carried as
# .carry/bins.tgz (.gpu, .gpu-prover, .gpu-32g: too large uncompressed).
#   1. NTT/H checks (compute_h at 1..2^20-5 against the CPU, every NTT
#      kind) and the spmv pipeline (h_device against the CPU's H)
#   2. every GPU prover check (H in every proof, host and device paths)
#   3. Filecoin 2 KiB PoRep C2, 5 timed runs, every proof through
#      verify_seal (issue 14's list; 197.7 ms on 2026-12-03; the 0/1 form
#      is now made beside synthesis): predicted ~190 ms
#   4. porep-like 2^27 compiled bench, device path only, reps 2: predicted
#      H 291 -> ~285 ms (c's permutation pass and the subtraction pass,
#      ~2.2 + ~3.7 ms, less one product per element in the final pass);
#      the 0/1 form made in ~100-150 ms (was 1036); z prepared upload ~28
set -u
out="${OUT:-/tmp}"
w=/tmp/call41; rm -rf "$w"; mkdir -p "$w/prover"
tar -xzf .carry/bins.tgz
t0=$(date +%s); left() { echo $((560 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "NTT and spmv checks"
timeout "$(lim 90)" ./.gpu/gpu_tests --filter ntt/ > "$w/checks-ntt.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-ntt.log" | tail -4 | cut -c1-200
timeout "$(lim 60)" ./.gpu/gpu_tests --filter spmv/ > "$w/checks-spmv.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-spmv.log" | tail -4 | cut -c1-200
stamp "prover checks"
OUT="$w/prover" timeout "$(lim 150)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp "2 KiB C2"
mkdir -p "$w/c2"
SECTOR_SIZE=2KiB REPEAT=5 GROUP= OUT="$w/c2" timeout "$(lim 120)" bash .gpu-32g/gpu-32g.sh c1 params prove > "$w/c2/run.log" 2>&1
echo "rc $?"; grep -E "prove:|params:|exit" "$w/c2/run.log" | tail -4 | cut -c1-300
stamp "compiled bench 27"
timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-330
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
