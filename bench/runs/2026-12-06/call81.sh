#!/usr/bin/env bash
# Call 81 (twenty-fourth session): Fq products by Karatsuba and a separate
# reduction (mont_mul_kara) and the point formulas' Y3 with one reduction
# (mul_sub), branch karatsuba (9c7e272). (1) Every kernel check. (2) The
# MSM rows, reps 2, new (.gpu) then main's 6bda4f7 build (.carry/base.tgz:
# bench_kernels as call 80 ran it) on the same card. The card line of
# each bench run gives the Fq product rates in one process (variant 0:
# mont_mul_ptx, 2: operator*, now mont_mul_kara). Predicted from SASS
# (IMAD-pipe units, a wide IMAD counted as two): Fq product -10%, G1
# madd -15.5% (9136 -> 7722 units); G1 2^24 ~98.8 -> ~88 ms (H200) if the
# accumulation (83%) stays IMAD-bound at 164 registers (3 blocks an SM,
# as before); G2 2^24 -7% (Fq2 products still three reductions).
# Binaries: .gpu at 9c7e272 (CUZK_CUDA_ARCHS=90), carry [".gpu", ".carry"].
set -u
. bench/runs/lib.sh 575 /tmp/c81
mkdir -p "$w/checks" /tmp/base
tar xzf .carry/base.tgz -C /tmp/base
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "kernel checks, all"
timeout "$(lim 230)" ./.gpu/gpu_tests > "$w/checks/all.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/all.log" | tail -8 | cut -c1-300
stamp "msm rows, new, reps 2"
timeout "$(lim 150)" ./.gpu/bench_kernels --filter msm_g --reps 2 --json-out "$w/new.json" > "$w/new.log" 2>&1
echo "rc $?"; grep -E "^Fq mul/s" "$w/new.log" | head -2 | cut -c1-250
grep -E "^msm_g[12] vram" "$w/new.log" | grep "ms (floor" | cut -c1-110
stamp "msm rows, base (6bda4f7), reps 2"
timeout "$(( $(left) - 8 ))" /tmp/base/.gpu/bench_kernels --filter msm_g --reps 2 --json-out "$w/base.json" > "$w/base.log" 2>&1
echo "rc $?"; grep -E "^Fq mul/s" "$w/base.log" | head -2 | cut -c1-250
grep -E "^msm_g[12] vram" "$w/base.log" | grep "ms (floor" | cut -c1-110
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
