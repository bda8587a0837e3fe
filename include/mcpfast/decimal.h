/*
 * Unsigned integers as decimal digits: digit pairs, powers of ten, digit counts.  Shared by
 * the JSON writer (integers) and the double formatter (the digits of a decimal).
 */
#ifndef MCPFAST_DECIMAL_H
#define MCPFAST_DECIMAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcpfast/compiler.h"


static const char mf_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t mf_pow10_u64[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
    10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
    100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};

/* Number of decimal digits of v (1 for 0). */
MF_ALWAYS_INLINE unsigned mf_decimal_length(uint64_t v) {
    uint64_t x = v | 1; /* same digit count, and log2 is defined */
#if defined(__GNUC__) || defined(__clang__)
    unsigned bits = 64u - (unsigned)__builtin_clzll(x);
#else
    unsigned bits = 0;
    for (uint64_t y = x; y; y >>= 1) bits++;
#endif
    /* bits * log10(2), which is floor(log10(x)) or one more. */
    unsigned t = (bits * 1233u) >> 12;
    return t + (x >= mf_pow10_u64[t]);
}

/* Decimal digits of v at out (room for 20 bytes needed); returns the count.  Written
 * backwards in place, two digits per step. */
MF_ALWAYS_INLINE size_t mf_format_u64(char *out, uint64_t v) {
    unsigned n = mf_decimal_length(v);
    char *p = out + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, mf_digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        memcpy(p - 2, mf_digit_pairs + 2 * v, 2);
    } else {
        p[-1] = (char)('0' + v);
    }
    return n;
}

#endif /* MCPFAST_DECIMAL_H */
