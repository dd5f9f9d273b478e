// Field arithmetic of kernels/field.cuh run on the CPU, for
// tests/emu_field.rs, which compares it with blstrs: built in its portable
// form (CUZK_EMU) and in its PTX form (tests/common's emu_binary_ptx: the
// carry chains the GPU runs, each PTX instruction emulated).
//
// Input, little-endian: u32 field (0: Fr, 32-byte elements; 1: Fq, 48),
// u32 n, then n pairs (a, b) of raw Montgomery elements. Output: per pair
// a * b, a^2 (sqr), a + b, a - b, -a.
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/field.cuh"

template <class F>
void run(uint32_t n) {
    std::vector<F> in(2 * (size_t)n + 1), out(5 * (size_t)n + 1);
    rd_bytes(in.data(), 2 * sizeof(F) * n, "short input pairs");
    for (uint32_t i = 0; i < n; i++) {
        const F a = in[2 * i], b = in[2 * i + 1];
        F* o = &out[5 * (size_t)i];
        o[0] = a * b;
        o[1] = a.sqr();
        o[2] = a + b;
        o[3] = a - b;
        o[4] = a.neg();
    }
    if (n && fwrite(out.data(), 5 * sizeof(F), n, stdout) != n)
        throw std::runtime_error("short write");
}

int main() {
    return emu_main("field_emu", [] {
        const uint32_t field = rd32(), n = rd32();
        if (field == 0) run<Fr>(n);
        else if (field == 1) run<Fq>(n);
        else throw std::runtime_error("field: 0 (Fr) or 1 (Fq)");
    });
}
