/*
 * JSON output in C: a growable byte buffer, and writers for the JSON pieces that need no
 * Python objects -- string escaping (from UTF-8 bytes or from the three PEP 393 code unit
 * widths), integers, and doubles in their shortest round-trip form.  No Python objects
 * here.
 *
 * Escaping rules (what json.dumps(..., ensure_ascii=False) writes): '"' and '\' are
 * escaped, control characters U+0000..U+001F are escaped (\b \t \n \f \r short forms,
 * \u00XX otherwise), everything else -- DEL, non-ASCII, U+2028/U+2029 -- is written raw as
 * UTF-8.  Lone surrogates cannot be written as UTF-8 and are reported to the caller.
 */
#ifndef MCPFAST_JSON_WRITER_H
#define MCPFAST_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Status codes of the writers. */
#define MF_WRITE_OK 0
#define MF_WRITE_NO_MEMORY (-1)
#define MF_WRITE_SURROGATE (-2)

/* ------------------------------------------------------------------------------------ */
/* The output buffer */

typedef struct mf_writer {
    char *data;
    size_t len;
    size_t cap;
} mf_writer;

/* Start with cap bytes; returns MF_WRITE_NO_MEMORY when malloc fails. */
static inline int mf_writer_init(mf_writer *w, size_t cap) {
    w->data = (char *)malloc(cap);
    w->len = 0;
    w->cap = w->data ? cap : 0;
    return w->data ? MF_WRITE_OK : MF_WRITE_NO_MEMORY;
}

static inline void mf_writer_free(mf_writer *w) {
    free(w->data);
    w->data = NULL;
    w->len = w->cap = 0;
}

/* Grow (doubling) so that at least extra more bytes fit. Kept out of line: it is rare. */
static MF_NOINLINE int mf_writer_grow(mf_writer *w, size_t extra) {
    size_t need, cap;
    char *data;
    if (extra > SIZE_MAX / 2 - w->len) return MF_WRITE_NO_MEMORY;
    need = w->len + extra;
    cap = w->cap ? w->cap : 256;
    while (cap < need) cap *= 2;
    data = (char *)realloc(w->data, cap);
    if (data == NULL) return MF_WRITE_NO_MEMORY;
    w->data = data;
    w->cap = cap;
    return MF_WRITE_OK;
}

/* Make room for extra more bytes; the unchecked writers below may then be used. */
MF_ALWAYS_INLINE int mf_writer_reserve(mf_writer *w, size_t extra) {
    if (MF_LIKELY(w->cap - w->len >= extra)) return MF_WRITE_OK;
    return mf_writer_grow(w, extra);
}

MF_ALWAYS_INLINE int mf_writer_put(mf_writer *w, const char *p, size_t n) {
    if (MF_UNLIKELY(mf_writer_reserve(w, n) != MF_WRITE_OK)) return MF_WRITE_NO_MEMORY;
    memcpy(w->data + w->len, p, n);
    w->len += n;
    return MF_WRITE_OK;
}

MF_ALWAYS_INLINE int mf_writer_putc(mf_writer *w, char c) {
    if (MF_UNLIKELY(mf_writer_reserve(w, 1) != MF_WRITE_OK)) return MF_WRITE_NO_MEMORY;
    w->data[w->len++] = c;
    return MF_WRITE_OK;
}

/* Replace the last byte written (a ',' after the last member becomes the closing bracket). */
MF_ALWAYS_INLINE void mf_writer_set_last(mf_writer *w, char c) { w->data[w->len - 1] = c; }

/* ------------------------------------------------------------------------------------ */
/* Integers */

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

MF_ALWAYS_INLINE int mf_write_u64(mf_writer *w, uint64_t v) {
    if (MF_UNLIKELY(mf_writer_reserve(w, 20) != MF_WRITE_OK)) return MF_WRITE_NO_MEMORY;
    w->len += mf_format_u64(w->data + w->len, v);
    return MF_WRITE_OK;
}

MF_ALWAYS_INLINE int mf_write_i64(mf_writer *w, int64_t v) {
    if (MF_UNLIKELY(mf_writer_reserve(w, 21) != MF_WRITE_OK)) return MF_WRITE_NO_MEMORY;
    if (v < 0) {
        w->data[w->len++] = '-';
        /* Negate in unsigned arithmetic: -INT64_MIN does not fit in int64. */
        w->len += mf_format_u64(w->data + w->len, (uint64_t)0 - (uint64_t)v);
    } else {
        w->len += mf_format_u64(w->data + w->len, (uint64_t)v);
    }
    return MF_WRITE_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Strings */

/*
 * For each byte: 0 when written as is, otherwise the letter of its escape: the short form
 * letter (b t n f r " \) or 'u' for \u00XX.
 */
static const char mf_escape_letter[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    0,   0,   '"', 0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   '\\', 0,  0,   0,
    /* 0x60 .. 0xFF: nothing to escape */
};

static const char mf_hex_digits[16] = {'0', '1', '2', '3', '4', '5', '6', '7',
                                       '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

/* Escape of an ASCII byte that needs one at out; returns the bytes written (2 or 6). */
static inline size_t mf_format_escape(char *out, unsigned char c) {
    char letter = mf_escape_letter[c];
    out[0] = '\\';
    out[1] = letter;
    if (letter != 'u') return 2;
    out[2] = '0';
    out[3] = '0';
    out[4] = mf_hex_digits[c >> 4];
    out[5] = mf_hex_digits[c & 15];
    return 6;
}

#define MF_ONES 0x0101010101010101ULL
#define MF_HIGHS 0x8080808080808080ULL

/*
 * High bit set in a byte of the result where that byte of x is < 0x20, '"' or '\'.  The
 * lowest flagged byte is always a true one (borrows only propagate upwards), which is all
 * the scanners need: they locate the first flagged byte, handle it and rescan after it.
 */
static inline uint64_t mf_swar_needs_escape(uint64_t x) {
    uint64_t quote = x ^ (MF_ONES * '"');
    uint64_t backslash = x ^ (MF_ONES * '\\');
    uint64_t control = (x - MF_ONES * 0x20) & ~x;
    uint64_t is_quote = (quote - MF_ONES) & ~quote;
    uint64_t is_backslash = (backslash - MF_ONES) & ~backslash;
    return (control | is_quote | is_backslash) & MF_HIGHS;
}

static inline unsigned mf_first_flagged_byte(uint64_t mask) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(mask) >> 3;
#else
    unsigned k = 0;
    while (!(mask & 0x80)) {
        mask >>= 8;
        k++;
    }
    return k;
#endif
}

/* Index of the lowest set bit of x (x != 0). */
static inline unsigned mf_ctz32(unsigned x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctz(x);
#else
    unsigned k = 0;
    while (!(x & 1)) {
        x >>= 1;
        k++;
    }
    return k;
#endif
}

/* Strings are written in chunks so that the worst case reservation (6 bytes per input
 * unit) stays bounded for very long strings. */
#define MF_STRING_CHUNK 4096
/* Extra room the escapers need past 6 bytes per input byte: they store whole 8-byte
 * words of which only the first bytes count. */
#define MF_ESCAPE_SLACK 8

/* Mask of the low n bytes of a word (n < 8). */
#define MF_LOW_BYTES(n) ((1ULL << (8 * (n))) - 1)

/* Escape n bytes one at a time (the fallback of the word-wise scanners below). */
static inline char *mf_escape_bytes(char *out, const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (MF_LIKELY(mf_escape_letter[c] == 0)) {
            *out++ = (char)c;
        } else {
            out += mf_format_escape(out, c);
        }
    }
    return out;
}

/* mf_escape_utf8_into for n >= 8: sixteen bytes at a time (SSE2) or eight (SWAR), then
 * the last 1..7 bytes as the top of the string's last 8 (an overlapping load). */
static MF_NOINLINE char *mf_escape_utf8_long(char *out, const unsigned char *s, size_t n) {
    size_t i = 0;
#if MF_SWAR
#if MF_SSE2
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i control_max = _mm_set1_epi8(0x1F);
    while (i + 16 <= n) {
        __m128i x = _mm_loadu_si128((const __m128i *)(s + i));
        _mm_storeu_si128((__m128i *)out, x);
        /* x <= 0x1F (unsigned) exactly when min(x, 0x1F) == x. */
        __m128i flagged = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
            _mm_cmpeq_epi8(_mm_min_epu8(x, control_max), x));
        unsigned mask = (unsigned)_mm_movemask_epi8(flagged);
        if (MF_LIKELY(mask == 0)) {
            out += 16;
            i += 16;
            continue;
        }
        unsigned k = mf_ctz32(mask);
        out += k;
        i += k;
        out += mf_format_escape(out, s[i]);
        i++;
    }
#endif
    while (i + 8 <= n) {
        uint64_t x, mask;
        memcpy(&x, s + i, 8);
        /* Copy all 8 first: there is room, and a run needing no escape is done. */
        memcpy(out, &x, 8);
        mask = mf_swar_needs_escape(x);
        if (MF_LIKELY(mask == 0)) {
            out += 8;
            i += 8;
            continue;
        }
        unsigned k = mf_first_flagged_byte(mask);
        out += k;
        i += k;
        out += mf_format_escape(out, s[i]);
        i++;
    }
    if (i < n && n >= 8) {
        size_t rem = n - i;
        uint64_t x;
        memcpy(&x, s + n - 8, 8);
        x >>= 8 * (8 - rem);
        if ((mf_swar_needs_escape(x) & MF_LOW_BYTES(rem)) == 0) {
            memcpy(out, &x, 8);
            return out + rem;
        }
    }
#endif
    return mf_escape_bytes(out, s + i, n - i);
}

/*
 * Escape n bytes of UTF-8 (or ASCII) at s into out, which has room for 6 * n +
 * MF_ESCAPE_SLACK bytes; returns the end of the output.  Bytes >= 0x80 are copied as they
 * are.  Strings shorter than 8 bytes (most keys and many values) are checked in line as
 * one word assembled from overlapping loads inside the string, never past its end.
 */
MF_ALWAYS_INLINE char *mf_escape_utf8_into(char *out, const unsigned char *s, size_t n) {
#if MF_SWAR
    uint64_t x;
    if (n >= 8) return mf_escape_utf8_long(out, s, n);
    if (n >= 4) {
        /* Two 4-byte loads cover the string; where they overlap they OR equal bytes. */
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        x = (uint64_t)lo | ((uint64_t)hi << (8 * (n - 4)));
    } else if (n > 0) {
        /* Bytes 0, n/2 and n-1 cover one to three bytes the same way. */
        x = (uint64_t)s[0] | ((uint64_t)s[n >> 1] << (8 * (n >> 1))) |
            ((uint64_t)s[n - 1] << (8 * (n - 1)));
    } else {
        return out;
    }
    if ((mf_swar_needs_escape(x) & MF_LOW_BYTES(n)) == 0) {
        memcpy(out, &x, 8);
        return out + n;
    }
#endif
    return mf_escape_bytes(out, s, n);
}

/* A JSON string (quotes included) from n bytes of valid UTF-8 or ASCII. */
MF_ALWAYS_INLINE int mf_write_string_utf8(mf_writer *w, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    /* Short strings (keys, most values) take one reservation and no chunk loop. */
    if (MF_LIKELY(n <= MF_STRING_CHUNK)) {
        if (MF_UNLIKELY(mf_writer_reserve(w, 6 * n + 2 + MF_ESCAPE_SLACK) != MF_WRITE_OK))
            return MF_WRITE_NO_MEMORY;
        char *out = w->data + w->len;
        *out++ = '"';
        out = mf_escape_utf8_into(out, p, n);
        *out++ = '"';
        w->len = (size_t)(out - w->data);
        return MF_WRITE_OK;
    }
    if (mf_writer_putc(w, '"') != MF_WRITE_OK) return MF_WRITE_NO_MEMORY;
    while (n > 0) {
        size_t chunk = n < MF_STRING_CHUNK ? n : MF_STRING_CHUNK;
        /* A chunk may end inside a multi-byte sequence: bytes >= 0x80 are copied one by
         * one unchanged, so the sequence is simply completed by the next chunk. */
        if (mf_writer_reserve(w, 6 * chunk + MF_ESCAPE_SLACK) != MF_WRITE_OK)
            return MF_WRITE_NO_MEMORY;
        char *out = mf_escape_utf8_into(w->data + w->len, p, chunk);
        w->len = (size_t)(out - w->data);
        p += chunk;
        n -= chunk;
    }
    return mf_writer_putc(w, '"');
}

/* An object member name: the JSON string of n bytes of UTF-8 or ASCII, then ':'. */
MF_ALWAYS_INLINE int mf_write_member_name_utf8(mf_writer *w, const char *s, size_t n) {
    if (MF_LIKELY(n <= MF_STRING_CHUNK)) {
        if (MF_UNLIKELY(mf_writer_reserve(w, 6 * n + 3 + MF_ESCAPE_SLACK) != MF_WRITE_OK))
            return MF_WRITE_NO_MEMORY;
        char *out = w->data + w->len;
        *out++ = '"';
        out = mf_escape_utf8_into(out, (const unsigned char *)s, n);
        *out++ = '"';
        *out++ = ':';
        w->len = (size_t)(out - w->data);
        return MF_WRITE_OK;
    }
    if (mf_write_string_utf8(w, s, n) != MF_WRITE_OK) return MF_WRITE_NO_MEMORY;
    return mf_writer_putc(w, ':');
}

/* UTF-8 of code point c (>= 0x80, not a surrogate) at out; returns the bytes written. */
static inline size_t mf_format_utf8(char *out, uint32_t c) {
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/*
 * Escape n one-byte code units (Latin-1, PEP 393 kind 1) into out (room for 6 * n +
 * MF_ESCAPE_SLACK bytes).
 * Runs of plain ASCII are found eight at a time.
 */
static inline char *mf_escape_ucs1_into(char *out, const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
#if MF_SWAR
        if (i + 8 <= n) {
            uint64_t x, mask;
            memcpy(&x, s + i, 8);
            memcpy(out, &x, 8);
            mask = mf_swar_needs_escape(x) | (x & MF_HIGHS);
            if (mask == 0) {
                out += 8;
                i += 8;
                continue;
            }
            unsigned k = mf_first_flagged_byte(mask);
            out += k;
            i += k;
        }
#endif
        uint8_t c = s[i++];
        if (c >= 0x80) {
            out += mf_format_utf8(out, c);
        } else if (mf_escape_letter[c] == 0) {
            *out++ = (char)c;
        } else {
            out += mf_format_escape(out, c);
        }
    }
    return out;
}

/*
 * One code unit c of a two- or four-byte str at out (room for 6 bytes). NULL when c is a
 * surrogate, which is always lone in PEP 393's representation.
 */
static inline char *mf_escape_wide_unit(char *out, uint32_t c) {
    if (c < 0x80) {
        if (MF_LIKELY(mf_escape_letter[c] == 0)) {
            *out = (char)c;
            return out + 1;
        }
        return out + mf_format_escape(out, (unsigned char)c);
    }
    if (MF_UNLIKELY(c >= 0xD800 && c <= 0xDFFF)) return NULL;
    return out + mf_format_utf8(out, c);
}

/*
 * Escape n two-byte code units (PEP 393 kind 2) into out (room for 6 * n bytes).
 * Returns NULL at a surrogate, its index in *bad.
 */
static inline char *mf_escape_ucs2_into(char *out, const uint16_t *s, size_t n, size_t *bad) {
    for (size_t i = 0; i < n; i++) {
        out = mf_escape_wide_unit(out, s[i]);
        if (MF_UNLIKELY(out == NULL)) {
            *bad = i;
            return NULL;
        }
    }
    return out;
}

/* As mf_escape_ucs2_into, for four-byte code units (PEP 393 kind 4). */
static inline char *mf_escape_ucs4_into(char *out, const uint32_t *s, size_t n, size_t *bad) {
    for (size_t i = 0; i < n; i++) {
        out = mf_escape_wide_unit(out, s[i]);
        if (MF_UNLIKELY(out == NULL)) {
            *bad = i;
            return NULL;
        }
    }
    return out;
}

/*
 * A JSON string (quotes included) from n code units of width kind (1, 2 or 4 bytes, as
 * PEP 393 stores a str).  MF_WRITE_SURROGATE with the code unit index in *bad when the
 * text holds a lone surrogate; the buffer then holds a partial string (callers abandon it).
 */
static inline int mf_write_string_units(mf_writer *w, int kind, const void *data, size_t n,
                                        size_t *bad) {
    size_t done = 0;
    if (mf_writer_putc(w, '"') != MF_WRITE_OK) return MF_WRITE_NO_MEMORY;
    while (done < n) {
        size_t chunk = n - done < MF_STRING_CHUNK ? n - done : MF_STRING_CHUNK;
        char *out;
        if (mf_writer_reserve(w, 6 * chunk + MF_ESCAPE_SLACK) != MF_WRITE_OK)
            return MF_WRITE_NO_MEMORY;
        out = w->data + w->len;
        if (kind == 1) {
            out = mf_escape_ucs1_into(out, (const uint8_t *)data + done, chunk);
        } else if (kind == 2) {
            out = mf_escape_ucs2_into(out, (const uint16_t *)data + done, chunk, bad);
        } else {
            out = mf_escape_ucs4_into(out, (const uint32_t *)data + done, chunk, bad);
        }
        if (MF_UNLIKELY(out == NULL)) {
            *bad += done;
            return MF_WRITE_SURROGATE;
        }
        w->len = (size_t)(out - w->data);
        done += chunk;
    }
    return mf_writer_putc(w, '"');
}

/* ------------------------------------------------------------------------------------ */
/* Doubles: the shortest decimal that reads back as the same double, formatted like
 * Python's repr(float) (and so json.dumps).
 *
 * Digits by the Schubfach method (R. Giulietti, "The Schubfach way to render doubles",
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

#endif /* MCPFAST_JSON_WRITER_H */
