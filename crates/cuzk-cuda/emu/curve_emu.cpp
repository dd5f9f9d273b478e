// The point operations of kernels/curve.cuh run on the CPU (cuda_emu.h)
// through the test kernels of kernels/tests.cu (test_g1_ops, test_g2_ops),
// for tests/emu_curve.rs, which compares them with blstrs. Built as is and
// with CUZK_FP64_MIX_FQ (half of each formula's Fq products by
// field_f64.cuh).
//
// Input, little-endian: u32 group (1: G1, 2: G2), u32 n, then n affine
// points P, n affine points Q (blst's layout) and n u32 multipliers k.
// Output: per pair the XYZZ points P+Q (mixed), P+Q (XYZZ), 2P, k P.
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/tests.cu"

template <class F>
void run(uint32_t n) {
    std::vector<Affine<F>> p(n + 1), q(n + 1);
    std::vector<uint32_t> k(n + 1);
    std::vector<Xyzz<F>> out(4 * (size_t)n + 1);
    rd_bytes(p.data(), sizeof(Affine<F>) * n, "short points P");
    rd_bytes(q.data(), sizeof(Affine<F>) * n, "short points Q");
    rd_bytes(k.data(), 4 * (size_t)n, "short multipliers");
    // One thread a block: the kernels' threads share nothing.
    emu_launch(n, 1, 0, [&] { curve_ops<F>(p.data(), q.data(), k.data(), out.data(), n); });
    if (n && fwrite(out.data(), 4 * sizeof(Xyzz<F>), n, stdout) != n)
        throw std::runtime_error("short write");
}

int main() {
    return emu_main("curve_emu", [] {
        const uint32_t group = rd32(), n = rd32();
        if (group == 1) run<Fq>(n);
        else if (group == 2) run<Fq2>(n);
        else throw std::runtime_error("group: 1 (G1) or 2 (G2)");
    });
}
