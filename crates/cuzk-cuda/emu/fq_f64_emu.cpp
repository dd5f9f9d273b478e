// The Fq products of kernels/field_f64.cuh (limb products as FP64 fused
// multiply-adds) run on the CPU (cuda_emu.h's exact __fma_rz), for
// tests/emu_fq_f64.rs, which compares them with blstrs.
//
// Input, little-endian: u32 n, then n pairs (a, b) of raw Montgomery Fq
// (48 bytes each). Output: per pair a * b, then a^2 (48 bytes each).
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/field.cuh"

int main() {
    return emu_main("fq_f64_emu", [] {
        const uint32_t n = rd32();
        std::vector<Fq> in(2 * (size_t)n + 1);
        rd_bytes(in.data(), (size_t)96 * n, "short input pairs");
        std::vector<Fq> out(2 * (size_t)n + 1);
        for (uint32_t i = 0; i < n; i++) {
            out[2 * i] = fq_mul_f64(in[2 * i], in[2 * i + 1]);
            out[2 * i + 1] = fq_sqr_f64(in[2 * i]);
        }
        if (n && fwrite(out.data(), 96, n, stdout) != n) throw std::runtime_error("short write");
    });
}
