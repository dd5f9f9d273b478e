#!/usr/bin/env bash
# 2026-12-05 (fourteenth session), call 56: what call 55 meant to time (its
# filter "msm_g1 vram" named no row group: bench_kernels' --filter matches
# a substring of the group names "msm_g1"/"msm_g2", so nothing ran).
# carry [".carry/bins.tgz", ".carry/prover2.tgz"] (prover2: .gpu-prover
# rebuilt with parameters of uneven B vectors refused before residency).
#   1. G1 2^26 and G2 2^24, default and FP64-mix builds. Predicted after
#      calls 54/55 (the FP64 Fq product no faster than PTX's alone, 2.44e10
#      against 2.56e10/s; side by side 2.58e10): the mix no faster, likely
#      slower (more registers in the accumulation: 154 -> 194 out of line).
#   2. prover checks, default build (the two-worker check now first makes
#      resident a set whose b_g2 has one point fewer: refused by name,
#      nothing reserved).
set -u
. bench/runs/lib.sh 330 /tmp/call56
tar -xzf .carry/bins.tgz; tar -xzf .carry/prover2.tgz
mkdir -p "$w/checks"
stamp "prover checks, default build"
timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |uneven" "$w/checks/run.log" | tail -4 | cut -c1-200
for b in gpu gpu-mix; do
    stamp "$b: G1 2^26"
    CUZK_MSM_BENCH_LOGS=26 timeout "$(lim 80)" ./.$b/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/$b-g1.json" > "$w/$b-g1.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/$b-g1.log" | grep -v pinned | cut -c1-90
    stamp "$b: G2 2^24"
    CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 60)" ./.$b/bench_kernels --filter msm_g2 --reps 2 --json-out "$w/$b-g2.json" > "$w/$b-g2.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/$b-g2.log" | head -4 | cut -c1-90
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
