#!/usr/bin/env bash
# Planned first call of the next session with device time (written in the
# twenty-sixth session, 2026-12-06): the hook CUZK_FQ_PARTS_INLINE
# (bench/gpu-kernels.md run 52: Fq's squaring and a b - c d inline, the
# product out of line; the G1 accumulation's mixed addition 4839 IMAD-pipe
# units against 5108, 160 registers, no spills; the bucket reduction's
# and group sums' spills nearly gone). .carry/g1b.tgz (git-ignored) holds
# gpu_tests, bench_kernels and gpu_prover_test built at 1f2e638 with
# CUZK_NVCC_DEFINES=CUZK_FQ_PARTS_INLINE (CUZK_CUDA_ARCHS=90); .gpu/bench_kernels is
# main's (22dc6d2's kernels = 1f2e638's default SASS, byte-identical).
# (0) g1b's kernel checks, all (~90 s; a failure voids its rows) and its
#     prover checks (gpu_prover_test, 179 checks, ~60 s).
# (1) G1 rows, reps 2, both builds in the same call. Predicted: g1b's
#     default row -4..-5% against main's (2^24 ~93.6 -> ~89.5 ms on an
#     H100, 2^26 ~369 -> ~352), unless the larger code misses the
#     instruction cache.
# (2) g1b's porep-like 2^27 partition (z prepared, reps 2; ~240 s with
#     its parameter generation): predicted ~1355 ms on an H100 (calls
#     83/84: 1401.0 / 1409.8 with main), ~1335 on an H200.
# If g1b wins: make the hook the default (drop fq_sqr_outline and
# fq_mul_sub_outline, keep the comment's figures), rebuild .gpu and
# .gpu-prover, and record it.
# Carry [".gpu/bench_kernels", ".carry/g1b.tgz"]; run as
#   CALL_BUDGET_S=585 bash bench/runs/planned/call85.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-585}" "${OUT:-/tmp}/c85"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mkdir -p /tmp/g1b && tar xzf .carry/g1b.tgz -C /tmp/g1b
g=/tmp/g1b/g1b
stamp "g1b kernel checks, all"
timeout "$(lim 150)" $g/gpu_tests > "$w/g1b-checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/g1b-checks.log" | tail -6 | cut -c1-300
stamp "g1b prover checks"
timeout "$(lim 90)" $g/gpu_prover_test > "$w/g1b-prover-checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/g1b-prover-checks.log" | tail -6 | cut -c1-300
g1_rows main ./.gpu/bench_kernels
g1_rows g1b $g/bench_kernels
partition27 g1b $g/gpu_prover_test 230
pack
stamp done
