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

#include "mcpfast/compiler.h"
#include "mcpfast/decimal.h"
#include "mcpfast/double_format.h"

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

/* The index of the lowest flagged byte of a mask mf_swar_needs_escape made (mask != 0). */
static inline unsigned mf_first_flagged_byte(uint64_t mask) {
    return mf_ctz64(mask) >> 3;
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
        unsigned k = mf_ctz64(mask);
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

#ifdef __cplusplus
}
#endif

#endif /* MCPFAST_JSON_WRITER_H */
