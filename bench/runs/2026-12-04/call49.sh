#!/usr/bin/env bash
# 2026-12-04 (tenth session), call 49. .gpu at main + h_device without its
# 2^0 special case (the general path: no passes, scaling by one, the
# product as a pass of no stages) (CUZK_CUDA_ARCHS=90), carried as
# .carry/bins.tgz. NTT checks: compute_h against the CPU at 1, 2, 3, 7,
# 100, 1000, 2^16+3, 2^20-5.
set -u
out="${OUT:-/tmp}"
w=/tmp/call49; rm -rf "$w"; mkdir -p "$w"
tar -xzf .carry/bins.tgz
timeout 90 ./.gpu/gpu_tests --filter ntt/ > "$w/checks-ntt.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |compute_h" "$w/checks-ntt.log" | tail -12 | cut -c1-200
tar -C "$w" -czf "$out/logs.tgz" .
