// The products of kernels/field_f64.cuh (limb products as FP64 fused
// multiply-adds) run on the CPU (cuda_emu.h's exact __fma_rz), for
// tests/emu_field_f64.rs, which compares them with blstrs.
//
// Input, little-endian: u32 field (0: Fr, 32-byte elements; 1: Fq, 48),
// u32 n, then n pairs (a, b) of raw Montgomery elements. Output: per pair
// a * b, then a^2.
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/field.cuh"

template <class F>
void run(uint32_t n) {
    std::vector<F> in(2 * (size_t)n + 1), out(2 * (size_t)n + 1);
    rd_bytes(in.data(), 2 * sizeof(F) * n, "short input pairs");
    for (uint32_t i = 0; i < n; i++) {
        out[2 * i] = mul_f64(in[2 * i], in[2 * i + 1]);
        out[2 * i + 1] = sqr_f64(in[2 * i]);
    }
    if (n && fwrite(out.data(), 2 * sizeof(F), n, stdout) != n)
        throw std::runtime_error("short write");
}

int main() {
    return emu_main("field_f64_emu", [] {
        const uint32_t field = rd32(), n = rd32();
        if (field == 0) run<Fr>(n);
        else if (field == 1) run<Fq>(n);
        else throw std::runtime_error("field: 0 (Fr) or 1 (Fq)");
    });
}
