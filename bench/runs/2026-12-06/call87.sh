#!/usr/bin/env bash
# Call 87 (twenty-seventh session): main's kernels (the Karatsuba Fq
# product and the lazy Y3 of run 48; unchanged since 22dc6d2 but for
# comments) end to end where they have not been measured:
# (1) the Filecoin 2 KiB PoRep C2, every proof through verify_seal
#     (call 47 on an H200: 137.5 ms median; GPU phases ~77 ms there);
# (2) on an H100 (the card most calls get): the daemon under load,
#     `gpu-daemon-bench.sh --quick` (porep-like-20, 200 jobs, 16 clients,
#     2 workers; 1915 proofs/min on an H200 in call 47, GPU busy 0.985:
#     GPU-bound, so the MSMs' -6% should show, predicted ~-4%);
# (3) on an H200 only, instead of (2): the headline rows on its
#     card, which no call has had since run 46: NTT 2^27 (38.00 ms),
#     G1 rows (predicted ~92.5 / ~362 ms at 2^24 / 2^26), the porep-like
#     2^27 partition with z prepared (predicted ~1380 ms; 1451.5 in run 46).
# Binaries (CUZK_CUDA_ARCHS=90, main at this commit's kernels):
# .gpu/bench_kernels, and .carry/bins.tgz with .gpu-prover and .gpu-32g.
# Carry [".gpu/bench_kernels", ".carry/bins.tgz"]; run as
#   CALL_BUDGET_S=580 bash bench/runs/2026-12-06/call87.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-580}" "${OUT:-/tmp}/c87"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
tar -xzf .carry/bins.tgz
mkdir -p "$w/c2" "$w/daemon"
stamp "2 KiB C2"
OUT="$w/c2" SECTOR_SIZE=2KiB REPEAT=5 GROUP= timeout "$(lim 110)" bash .gpu-32g/gpu-32g.sh c1 params prove > "$w/c2/run.log" 2>&1
echo "rc $?"; grep -E "prove:|params:|exit|verif" "$w/c2/run.log" | tail -6 | cut -c1-300
if [ "${mem:-0}" -gt 100000 ]; then
  stamp "ntt 2^27 (H200)"
  CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 60)" ./.gpu/bench_kernels --filter ntt --reps 3 > "$w/ntt.log" 2>&1
  echo "rc $?"; grep -E "ms \(floor" "$w/ntt.log" | head -12 | cut -c1-110
  g1_rows h200 ./.gpu/bench_kernels
  partition27 h200 ./.gpu-prover/gpu_prover_test 230
else
  mkdir -p .gpu-daemon && cp .gpu-32g/cuzk scripts/gpu-daemon-bench.sh .gpu-daemon/
  stamp "daemon --quick"
  OUT="$w/daemon" timeout "$(lim 200)" bash .gpu-daemon/gpu-daemon-bench.sh --quick > "$w/daemon/run.log" 2>&1
  echo "rc $?"; grep -E "proofs/min|proofs_per_min|busy|failed|verified" "$w/daemon/run.log" | tail -8 | cut -c1-300
fi
rm -f "$w"/daemon/*.tgz.tmp
tar -C "$w" -czf "$w.tgz" . && rm -rf "$w" && mkdir -p "$w" && mv "$w.tgz" "$w/logs.tgz"
stamp done
