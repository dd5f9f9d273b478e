#!/usr/bin/env bash
# 2026-12-04 (tenth session), call 45. .gpu and .gpu-prover at main + H's
# product fused into the first DIF pass (ntt_mul_pointwise gone), H's
# steps timed on request, the witness dropped on a thread of its own after
# its partition, the pool's release threshold settable (CUZK_CUDA_ARCHS=90),
# carried as .carry/bins.tgz.
#   1. NTT checks (compute_h against the CPU at every size, now through the
#      fused product).
#   2. ncu of the default pass kernel (r2x3) at 2^27: where a transform's
#      ~42 ms go (issue, stalls, pipes).
#   3. porep-like 2^27 compiled bench, device path only, reps 2: z prepared
#      with the default pool (a quarter of the card kept), then with the
#      pool keeping all, then H's steps timed.
#   Predicted: the proof's wall time ~ its phases (~200 ms less: the drop);
#   H -2..-3 ms (one 3-stream pass fewer); with the pool keeping all, z's
#   allocation ~0 ms and a/b/c and MSM phases a few ms less each if the
#   release at synchronisations is the cost (resident parameters alone pass
#   the quarter).
set -u
out="${OUT:-/tmp}"
w=/tmp/call45; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((570 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
stamp "NTT checks"
timeout "$(lim 90)" ./.gpu/gpu_tests --filter ntt/ > "$w/checks-ntt.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-ntt.log" | tail -4 | cut -c1-200
stamp "ncu r2x3 2^27"
CUZK_NTT_BENCH_LOGS=27 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 90)" /usr/local/cuda/bin/ncu --clock-control none \
  -k regex:ntt_pass_r2x3 --launch-skip 3 --launch-count 3 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --section LaunchStats --section MemoryWorkloadAnalysis \
  ./.gpu/bench_kernels --filter ntt --reps 1 > "$w/ncu-ntt.log" 2>&1
echo "rc $?"; grep -E "ntt_pass_r2x3|Duration|Issue Slots Busy|Executed Ipc A|Achieved Occupancy|Registers Per|Memory Throughput|No Eligible|Warp Cycles Per Issued|Compute \(SM\) Throughput" "$w/ncu-ntt.log" | head -40 | cut -c1-160
stamp "compiled bench 27"
timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|pool keeps|H steps|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
