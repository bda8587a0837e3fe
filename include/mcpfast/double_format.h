/*
 * Doubles as text: the shortest decimal that reads back as the same double, written the
 * way Python's repr(float) (and so json.dumps) writes it.  Needs mf_double_init() once
 * before the first mf_format_double().
 */
#ifndef MCPFAST_DOUBLE_FORMAT_H
#define MCPFAST_DOUBLE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcpfast/compiler.h"
#include "mcpfast/decimal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Digits by the Schubfach method (R. Giulietti, "The Schubfach way to render doubles",
 * 2020): with k = floor(log10(ulp)), scale the rounding interval of v by 10^-k using a
 * 126-bit approximation g of 10^-k and round-to-odd products, then pick among the
 * decimals of the last two digit positions the shortest one inside the interval, and of
 * two equally short ones the closest to v (ties to even).  The g table is computed once
 * by mf_double_init() with exact big-integer arithmetic. Subnormal doubles are left to
 * the caller (mf_format_double returns 0 for them).
 */

#define MF_G_E_MIN (-292) /* g of 10^e for e in [MF_G_E_MIN, MF_G_E_MAX] */
#define MF_G_E_MAX 324
#define MF_MASK63 0x7FFFFFFFFFFFFFFFULL

static uint64_t mf_g_table[MF_G_E_MAX - MF_G_E_MIN + 1][2]; /* {g1, g0}: g = g1 2^63 + g0 */
static int mf_g_ready = 0;

/* floor(q log10(2)), floor(log10(3/4 2^q)), floor(e log2(10)) -- exact in the ranges used
 * here (|q| <= 1100, |e| <= 340); these fixed-point forms are checked exhaustively by
 * the tests through every binary exponent. Right shifts of negative values are
 * arithmetic on every supported compiler. */
static inline int mf_flog10_pow2(int q) { return (int)(((int64_t)q * 661971961083LL) >> 41); }
static inline int mf_flog10_three_quarters_pow2(int q) {
    return (int)(((int64_t)q * 661971961083LL - 274743187321LL) >> 41);
}
static inline int mf_flog2_pow10(int e) { return (int)(((int64_t)e * 913124641741LL) >> 38); }

/* Big natural numbers for building the table: little-endian 32-bit limbs. */
#define MF_BIG_LIMBS 40 /* 1280 bits: 10^324 needs 1077, 2^1152 fits */

static inline void mf_big_mul10(uint32_t *x) {
    uint64_t carry = 0;
    for (int i = 0; i < MF_BIG_LIMBS; i++) {
        uint64_t t = (uint64_t)x[i] * 10 + carry;
        x[i] = (uint32_t)t;
        carry = t >> 32;
    }
}

static inline void mf_big_div10(uint32_t *x) {
    uint64_t rem = 0;
    for (int i = MF_BIG_LIMBS - 1; i >= 0; i--) {
        uint64_t t = (rem << 32) | x[i];
        x[i] = (uint32_t)(t / 10);
        rem = t % 10;
    }
}

static inline int mf_big_bit_length(const uint32_t *x) {
    for (int i = MF_BIG_LIMBS - 1; i >= 0; i--) {
        if (x[i]) {
            int n = 32;
            while (!(x[i] >> (n - 1))) n--;
            return 32 * i + n;
        }
    }
    return 0;
}

/* count (<= 63) bits of x starting at bit lo (bits below 0 read as 0). */
static inline uint64_t mf_big_bits(const uint32_t *x, int lo, int count) {
    uint64_t v = 0;
    for (int b = count - 1; b >= 0; b--) {
        int i = lo + b;
        v <<= 1;
        if (i >= 0 && i < 32 * MF_BIG_LIMBS) v |= (x[i >> 5] >> (i & 31)) & 1;
    }
    return v;
}

/* g = floor(x / 2^lo) + 1, the 126 bits of x from bit lo up, split into g1 and g0. */
static inline void mf_g_store(uint64_t *entry, const uint32_t *x, int lo) {
    uint64_t g0 = mf_big_bits(x, lo, 63) + 1;
    uint64_t g1 = mf_big_bits(x, lo + 63, 63);
    if (g0 >> 63) {
        g0 &= MF_MASK63;
        g1 += 1;
    }
    entry[0] = g1;
    entry[1] = g0;
}

/*
 * Fill the table: g(e) = floor(10^e 2^(125 - r)) + 1 with r = floor(log2(10^e)), so that
 * 2^125 < g <= 2^126.  Positive powers come from repeated multiplication by ten; negative
 * ones from repeated floor division of 2^1152 by ten (floor(floor(a/b)/c) = floor(a/bc)).
 */
static inline void mf_double_init(void) {
    uint32_t x[MF_BIG_LIMBS];
    int bits_of_pow10[MF_G_E_MAX + 1];
    if (mf_g_ready) return;
    memset(x, 0, sizeof x);
    x[0] = 1;
    for (int e = 0; e <= MF_G_E_MAX; e++) {
        int r = mf_big_bit_length(x) - 1; /* 10^e is not a power of two but for e = 0 */
        bits_of_pow10[e] = r + 1;
        mf_g_store(mf_g_table[e - MF_G_E_MIN], x, r - 125);
        mf_big_mul10(x);
    }
    memset(x, 0, sizeof x);
    x[1152 / 32] = 1; /* 2^1152 */
    for (int m = 1; m <= -MF_G_E_MIN; m++) {
        mf_big_div10(x); /* floor(2^1152 / 10^m) */
        /* r = floor(log2(10^-m)) = -L with L the bit length of 10^m; we need
         * floor(2^(125 + L) / 10^m) = floor(x / 2^(1152 - 125 - L)). */
        mf_g_store(mf_g_table[-m - MF_G_E_MIN], x, 1152 - 125 - bits_of_pow10[m]);
    }
    mf_g_ready = 1;
}

static inline uint64_t mf_mul_high(uint64_t a, uint64_t b, uint64_t *low) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = (unsigned __int128)a * b;
    *low = (uint64_t)p;
    return (uint64_t)(p >> 64);
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *low = (mid << 32) | (uint32_t)p00;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* Round to odd of g cp / 2^127 (g = g1 2^63 + g0): floor, with the lowest bit set when
 * anything was cut off. */
static inline uint64_t mf_round_to_odd(uint64_t g1, uint64_t g0, uint64_t cp) {
    uint64_t x0, y0;
    uint64_t x1 = mf_mul_high(g0, cp, &x0);
    uint64_t y1 = mf_mul_high(g1, cp, &y0);
    uint64_t z = (y0 >> 1) + x1;
    uint64_t vbp = y1 + (z >> 63);
    (void)x0;
    return vbp | (((z & MF_MASK63) + MF_MASK63) >> 63);
}

/* Shortest decimal f 10^e of the positive normal double c 2^q (c with its hidden bit). */
static inline void mf_shortest_decimal(uint64_t c, int q, uint64_t *f, int *e) {
    const uint64_t c_min = 1ULL << 52;
    uint64_t out = c & 1, cb = c << 2, cbr = cb + 2, cbl;
    int k;
    if (c != c_min || q == -1074) {
        cbl = cb - 2;
        k = mf_flog10_pow2(q);
    } else {
        /* At a power of two the interval below is half as wide as the one above. */
        cbl = cb - 1;
        k = mf_flog10_three_quarters_pow2(q);
    }
    int h = q + mf_flog2_pow10(-k) + 2;
    const uint64_t *g = mf_g_table[-k - MF_G_E_MIN];
    uint64_t vb = mf_round_to_odd(g[0], g[1], cb << h);
    uint64_t vbl = mf_round_to_odd(g[0], g[1], cbl << h);
    uint64_t vbr = mf_round_to_odd(g[0], g[1], cbr << h);
    uint64_t s = vb >> 2;
    if (s >= 100) {
        /* One digit fewer: at most one multiple of ten (sp10 or tp10) is inside. */
        uint64_t sp10 = 10 * (s / 10), tp10 = sp10 + 10;
        int upin = vbl + out <= sp10 << 2;
        int wpin = (tp10 << 2) + out <= vbr;
        if (upin != wpin) {
            *f = upin ? sp10 : tp10;
            *e = k;
            return;
        }
    }
    uint64_t t = s + 1;
    int uin = vbl + out <= s << 2;
    int win = (t << 2) + out <= vbr;
    if (uin != win) {
        *f = uin ? s : t;
        *e = k;
        return;
    }
    /* Both inside: the closer one, ties to even. */
    int64_t cmp = (int64_t)(vb - ((s + t) << 1));
    *f = (cmp < 0 || (cmp == 0 && (s & 1) == 0)) ? s : t;
    *e = k;
}

/*
 * repr() of a finite double at out (room for 32 bytes); returns the length, or 0 for a
 * subnormal double (left to the caller).  Python's rules: exponent notation when the
 * decimal point position is <= -4 or > 16 ("1e+16", "1.5e-05"), else positional with at
 * least one digit after the point ("100.0", "0.0001").
 */
static inline size_t mf_format_double(char *out, double v) {
    uint64_t bits, c, f;
    int bq, e;
    char *p = out;
    memcpy(&bits, &v, 8);
    if (bits >> 63) *p++ = '-';
    bq = (int)((bits >> 52) & 0x7FF);
    c = bits & ((1ULL << 52) - 1);
    if (bq == 0) {
        if (c != 0) return 0;
        memcpy(p, "0.0", 3);
        return (size_t)(p + 3 - out);
    }
    c |= 1ULL << 52;
    int q = bq - 1075;
    if (q < 0 && q > -53 && (c & ((1ULL << -q) - 1)) == 0) {
        /* An integer below 2^53: its digits are exact. */
        f = c >> -q;
        e = 0;
    } else {
        mf_shortest_decimal(c, q, &f, &e);
    }
    /* Drop trailing zeros: a few wide steps, then single ones. */
    while (f % 100000000 == 0) {
        f /= 100000000;
        e += 8;
    }
    if (f % 10000 == 0) {
        f /= 10000;
        e += 4;
    }
    if (f % 100 == 0) {
        f /= 100;
        e += 2;
    }
    if (f % 10 == 0) {
        f /= 10;
        e += 1;
    }
    char digits[20];
    int n = (int)mf_format_u64(digits, f);
    int point = n + e; /* value = 0.digits x 10^point */
    if (point <= -4 || point > 16) {
        int x = point - 1;
        *p++ = digits[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)(n - 1));
            p += n - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        if (x < 0) x = -x;
        if (x >= 100) {
            *p++ = (char)('0' + x / 100);
            x %= 100;
        }
        memcpy(p, mf_digit_pairs + 2 * x, 2);
        p += 2;
    } else if (point <= 0) {
        *p++ = '0';
        *p++ = '.';
        memset(p, '0', (size_t)(-point));
        p += -point;
        memcpy(p, digits, (size_t)n);
        p += n;
    } else if (point < n) {
        memcpy(p, digits, (size_t)point);
        p += point;
        *p++ = '.';
        memcpy(p, digits + point, (size_t)(n - point));
        p += n - point;
    } else {
        memcpy(p, digits, (size_t)n);
        p += n;
        memset(p, '0', (size_t)(point - n));
        p += point - n;
        *p++ = '.';
        *p++ = '0';
    }
    return (size_t)(p - out);
}

#ifdef __cplusplus
}
#endif

#endif /* MCPFAST_DOUBLE_FORMAT_H */
