// What the emulator drivers (ntt_emu.cpp, msm_sort_emu.cpp) share: reading
// their little-endian input from stdin, and a main that runs the driver's
// body and turns an exception (a short input, a bad launch) into a message
// on stderr and exit status 1.
#pragma once
#include <cstdio>
#include <stdexcept>

inline uint32_t rd32() {
    uint32_t v;
    if (fread(&v, 4, 1, stdin) != 1) throw std::runtime_error("short input");
    return v;
}

// `n` bytes from stdin into `dst`.
inline void rd_bytes(void* dst, size_t n, const char* what) {
    if (n && fread(dst, 1, n, stdin) != n) throw std::runtime_error(what);
}

template <class Body>
int emu_main(const char* name, Body body) {
    try {
        body();
        return 0;
    } catch (const std::exception& e) {
        fprintf(stderr, "%s: %s\n", name, e.what());
    } catch (const char* e) {
        fprintf(stderr, "%s: %s\n", name, e);
    }
    return 1;
}
