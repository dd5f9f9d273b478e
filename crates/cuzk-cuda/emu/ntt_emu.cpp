// The NTT kernels of kernels/ntt.cuh run on the CPU (cuda_emu.h), driven by
// a list of launches read from stdin: the test (tests/emu_ntt.rs) sends the
// buffers and the launches device.rs would make, and reads buffer 0 back.
//
// Input, little-endian: u32 buffers; per buffer u64 bytes, then the bytes.
// u32 launches; per launch u32 kernel, grid, block, smem, nargs, then per
// argument u32 tag (0: u32 value, 1: address of buffer v, 2: null) and u32 v.
// Output: buffer 0's bytes.
#include "cuda_emu.h"
#include "emu_main.h"
#include "../kernels/ntt.cuh"

int main() {
    return emu_main("ntt_emu", [] {
        std::vector<std::vector<uint4>> bufs(rd32());
        for (auto& b : bufs) {
            uint64_t bytes;
            if (fread(&bytes, 8, 1, stdin) != 1) throw std::runtime_error("short input");
            b.resize((bytes + 15) / 16 + 1);
            rd_bytes(b.data(), bytes, "short buffer");
        }
        uint32_t launches = rd32();
        for (uint32_t l = 0; l < launches; l++) {
            uint32_t kernel = rd32(), grid = rd32(), block = rd32(), smem = rd32(), nargs = rd32();
            std::vector<uint64_t> a(nargs);
            for (auto& x : a) {
                uint32_t tag = rd32(), v = rd32();
                if (tag == 0) x = v;
                else if (tag == 1) x = (uint64_t)(uintptr_t)bufs.at(v).data();
                else x = 0;
            }
            auto fr = [&](int i) { return (Fr*)(uintptr_t)a.at(i); };
            auto u = [&](int i) { return (uint32_t)a.at(i); };
            auto pass = [&](auto k) {
                if (nargs != 11) throw std::runtime_error("ntt_pass takes 11 arguments");
                emu_launch(grid, block, smem, [&] {
                    k(fr(0), fr(1), u(2), u(3), u(4), u(5), u(6), fr(7), fr(8), u(9), u(10));
                });
            };
            auto perm = [&](auto k) {
                if (nargs != 11) throw std::runtime_error("ntt_perm_pass takes 11 arguments");
                emu_launch(grid, block, smem, [&] {
                    k(fr(0), fr(1), fr(2), u(3), u(4), u(5), u(6), fr(7), fr(8), u(9), u(10));
                });
            };
            switch (kernel) {
                case 0:
                    if (nargs != 6) throw std::runtime_error("ntt_bitrev takes 6 arguments");
                    emu_launch(grid, block, smem,
                               [&] { ntt_bitrev(fr(0), u(1), fr(2), fr(3), u(4), u(5)); });
                    break;
                case 1: pass(ntt_pass_r1); break;
                case 2: pass(ntt_pass_r2); break;
                case 3: pass(ntt_pass_r3); break;
                case 4: pass(ntt_pass_r3x2); break;
                case 6: pass(ntt_pass_r2x3); break;
                case 5:
                    if (nargs != 5) throw std::runtime_error("ntt_powers takes 5 arguments");
                    emu_launch(grid, block, smem,
                               [&] { ntt_powers(fr(0), u(1), fr(2), fr(3), u(4)); });
                    break;
                case 7:
                    if (nargs != 7) throw std::runtime_error("h_finish_tiled takes 7 arguments");
                    emu_launch(grid, block, smem, [&] {
                        h_finish_tiled(fr(0), fr(1), fr(2), u(3), fr(4), fr(5), u(6));
                    });
                    break;
                case 8:
                    if (nargs != 6) throw std::runtime_error("h_finish_bitrev takes 6 arguments");
                    emu_launch(grid, block, smem, [&] {
                        h_finish_bitrev(fr(0), fr(1), u(2), fr(3), fr(4), u(5));
                    });
                    break;
                case 9: perm(ntt_perm_pass_r1); break;
                case 10: perm(ntt_perm_pass_r2); break;
                case 11: perm(ntt_perm_pass_r3); break;
                case 12: perm(ntt_perm_pass_r3x2); break;
                case 13: perm(ntt_perm_pass_r2x3); break;
                case 14:
                    if (nargs != 6) throw std::runtime_error("ntt_bitrev_tiled takes 6 arguments");
                    emu_launch(grid, block, smem,
                               [&] { ntt_bitrev_tiled(fr(0), u(1), fr(2), fr(3), u(4), u(5)); });
                    break;
                default: throw std::runtime_error("unknown kernel");
            }
        }
        fwrite(bufs.at(0).data(), 1, (bufs.at(0).size() - 1) * 16, stdout);
    });
}
