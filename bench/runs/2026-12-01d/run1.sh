#!/usr/bin/env bash
# Session 14 (2026-12-01, night) GPU call 1. Issue 14: the kernel bench
# (every NTT pass and G1 build side by side) and Nsight Compute alone on
# the GPU; then the 32 GiB run (issue 13) starts in the background (its
# first minutes are CPU work: c1, then the circuit's synthesis for the
# parameters) while the kernel checks and the large NTT round trips run.
set -u
out="${OUT:-/tmp}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - start) )); }
{ nvidia-smi; nproc; free -g; df -hT / /tmp "$HOME"; } > "$out/smi.txt" 2>&1
echo "== bench $(date +%T)"
timeout 175 ./.gpu/bench_kernels --reps 3 --json-out "$out/bench.json" > "$out/bench.log" 2>&1
echo "bench rc $?"; grep -E "ms \(floor" "$out/bench.log" | head -70
NCU="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"
echo "== ncu ntt $(date +%T) ($(left) s left)"
timeout 70 "$NCU" --clock-control none -k regex:ntt_pass_r --launch-count 120 $sections --csv \
    ./.gpu/bench_kernels --filter ntt --shrink 3 --reps 1 > "$out/ncu-ntt.csv" 2> "$out/ncu-ntt.err"
wc -l "$out/ncu-ntt.csv"; tail -2 "$out/ncu-ntt.err"
echo "== ncu msm $(date +%T) ($(left) s left)"
timeout 50 "$NCU" --clock-control none -k regex:msm_accumulate_g1 --launch-count 12 $sections --csv \
    ./.gpu/bench_kernels --filter "msm_g1 vram" --shrink 6 --reps 1 > "$out/ncu-msm.csv" 2> "$out/ncu-msm.err"
wc -l "$out/ncu-msm.csv"; tail -2 "$out/ncu-msm.err"
echo "== 32g start $(date +%T)"
. "$here/g32env.sh"
( export OUT="$out/g32"; GROUP=5 bash .gpu-32g/gpu-32g.sh --background c1 params prove )
echo "== kernels $(date +%T) ($(left) s left)"
OUT="$out" timeout 170 bash .gpu/gpu-test.sh > "$out/kernels.log" 2>&1
grep -E "^FAIL|passed, " "$out/kernels.log" | tail -8
echo "== large ntt $(date +%T) ($(left) s left)"
timeout $(( $(left) - 15 )) ./.gpu/gpu_tests --large --filter "round trips" > "$out/large-ntt.log" 2>&1
echo "large rc $?"; tail -4 "$out/large-ntt.log"
echo "== 32g $(date +%T)"
( export OUT="$out/g32"; bash .gpu-32g/gpu-32g.sh --status )
echo "== done $(date +%T)"
cd "$out" && tar czf run1-logs.tgz *.log *.csv *.err *.json smi.txt 2>/dev/null; ls
