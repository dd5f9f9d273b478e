// The Fr product of the NTT's "fast" pass kernels (ntt.cuh, ntt_pass_f*):
// field.cuh's mont_mul_ptx rows, with the final conditional subtraction of
// r as a PTX borrow chain instead of Fp::reduce_once's 64-bit C++ form.
//
// Why: in SASS (sm_90, nvcc 13.0, cuobjdump) the C++ form's signed 64-bit
// borrows (`d >> 32`) cost SHF.R.S32.HI per limb and push ptxas into saving
// and restoring carry predicates across the rows (P2R / ISETP.NE pairs): a
// lone Fr product is 344 instructions with it and 264 with the chain; four
// independent products by one twiddle, as in an NTT round, 1193 against 992.
// The IMAD work is the same (177 IMAD-class instructions per product); the
// NTT passes are bound by instruction issue (bench/gpu-kernels.md run 9).
// The values are mont_mul_ptx's, bit for bit.
#pragma once
#include "field.cuh"

// r - m if r >= m (r < 2m), the subtraction and the select in PTX.
DEV void fr_reduce_once_ptx(Fr& r) {
#ifdef CUZK_EMU
    r.reduce_once();
#else
    uint32_t t[8], borrow;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(t[0]) : "r"(r.v[0]), "r"(FrParams::mod(0)));
#pragma unroll
    for (int i = 1; i < 8; i++)
        asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(t[i]) : "r"(r.v[i]), "r"(FrParams::mod(i)));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
#pragma unroll
    for (int i = 0; i < 8; i++) r.v[i] = borrow ? r.v[i] : t[i];
#endif
}

// a * b * R^-1 mod r for a, b < r: mont_mul_ptx<FrParams> with the final
// subtraction above (the CPU emulator, which has no PTX, takes the C++ CIOS).
DEV Fr fr_mul_fast(const Fr& a, const Fr& b) {
#if defined(CUZK_EMU) || defined(CUZK_CIOS_MUL)
    return mont_mul_cios<FrParams>(a, b);
#else
    constexpr int N = 8;
    uint32_t mod[N];
#pragma unroll
    for (int i = 0; i < N; i++) mod[i] = FrParams::mod(i);
    Fr r;
    uint32_t* ev = r.v;
    uint32_t od[N + 1];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        ptx_mont_row<FrParams>(ev, od, a.v, mod, b.v[i], i == 0);
        ptx_mont_row<FrParams>(od, ev, a.v, mod, b.v[i + 1], false);
    }
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
#pragma unroll
    for (int i = 1; i < N - 1; i++)
        asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(ev[i]) : "r"(od[i + 1]));
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(ev[N - 1]));
    fr_reduce_once_ptx(r);
    return r;
#endif
}
