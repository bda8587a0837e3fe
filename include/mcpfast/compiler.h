/*
 * Compiler hints shared by mcpfast's C headers: branch prediction, inlining, and which
 * word-at-a-time scans the target allows (MF_SWAR, MF_SSE2), lowest-set-bit indexes.
 */
#ifndef MCPFAST_COMPILER_H
#define MCPFAST_COMPILER_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define MF_LIKELY(x) __builtin_expect(!!(x), 1)
#define MF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MF_NOINLINE __attribute__((noinline))
#define MF_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define MF_LIKELY(x) (x)
#define MF_UNLIKELY(x) (x)
#define MF_NOINLINE
#define MF_ALWAYS_INLINE static inline
#endif

/* Eight bytes at a time needs little-endian byte order to locate the first flagged byte. */
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || \
    defined(_M_X64) || defined(_M_ARM64)
#define MF_SWAR 1
#else
#define MF_SWAR 0
#endif

/* SSE2 is part of every x86-64 CPU: sixteen bytes at a time without -march flags. */
#if MF_SWAR && (defined(__SSE2__) || defined(_M_X64))
#define MF_SSE2 1
#include <emmintrin.h>
#else
#define MF_SSE2 0
#endif

/* Index of the lowest set bit of x (x != 0; a 32-bit mask is widened, for free). */
static inline unsigned mf_ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned k = 0;
    while (!(x & 1)) {
        x >>= 1;
        k++;
    }
    return k;
#endif
}

#endif /* MCPFAST_COMPILER_H */
