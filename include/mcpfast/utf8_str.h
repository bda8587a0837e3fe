/*
 * str objects from UTF-8 that simdjson has already validated, without CPython's general
 * decoder (which checks again and, for short strings, costs more in set-up than in work):
 * one pass finds the length in code points and the widest lead byte, which gives the
 * exact kind CPython requires (UCS1 / UCS2 / UCS4: a str is always stored in the
 * narrowest kind that holds its largest code point), a second pass writes the code points.
 * Only for valid UTF-8: anything else must go through PyUnicode_DecodeUTF8.
 */
#ifndef MCPFAST_UTF8_STR_H
#define MCPFAST_UTF8_STR_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "mcpfast/compiler.h"

/* The code point starting at s[*i] (valid UTF-8); *i moves past it. */
MF_ALWAYS_INLINE Py_UCS4 mf_utf8_next(const uint8_t *s, Py_ssize_t *i) {
    Py_ssize_t k = *i;
    uint32_t b = s[k];
    if (b < 0x80) {
        *i = k + 1;
        return b;
    }
    if (b < 0xE0) {
        *i = k + 2;
        return ((b & 0x1F) << 6) | (s[k + 1] & 0x3F);
    }
    if (b < 0xF0) {
        *i = k + 3;
        return ((b & 0x0F) << 12) | ((uint32_t)(s[k + 1] & 0x3F) << 6) | (s[k + 2] & 0x3F);
    }
    *i = k + 4;
    return ((b & 0x07) << 18) | ((uint32_t)(s[k + 1] & 0x3F) << 12) |
           ((uint32_t)(s[k + 2] & 0x3F) << 6) | (s[k + 3] & 0x3F);
}

#define MF_HIGH_BITS 0x8080808080808080ULL

/* Whether the 8 bytes at s are all ASCII. */
MF_ALWAYS_INLINE int mf_ascii8(const uint8_t *s) {
    uint64_t word;
    memcpy(&word, s, 8);
    return (word & MF_HIGH_BITS) == 0;
}

/* A new str holding the n bytes of valid UTF-8 at data; NULL with an exception set. */
static PyObject *mf_str_from_valid_utf8(const char *data, Py_ssize_t n) {
    const uint8_t *s = (const uint8_t *)data;
    Py_ssize_t i = 0, continuations = 0;
    uint64_t any_c4 = 0, any_f0 = 0;
    /* Eight bytes at a time (a word of ASCII only is skipped): a continuation byte is
     * 10xxxxxx (bit 7 set, bit 6 clear); a byte >= C4 starts a character that needs UCS2,
     * one >= F0 (bits 7..4 set) a character that needs UCS4. */
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if ((w & MF_HIGH_BITS) == 0) continue;
        continuations += __builtin_popcountll(w & ~(w << 1) & MF_HIGH_BITS);
        /* per byte b: (b & 0x7F) + 0x3C has bit 7 set iff (b & 0x7F) >= 0x44, i.e. for a
         * byte with bit 7 set, b >= 0xC4; the sum of two 7-bit values never carries. */
        any_c4 |= w & (((w & ~MF_HIGH_BITS) + 0x3C3C3C3C3C3C3C3CULL) & MF_HIGH_BITS);
        any_f0 |= w & (w << 1) & (w << 2) & (w << 3) & MF_HIGH_BITS;
    }
    uint32_t widest = 0;
    for (; i < n; i++) {
        uint32_t b = s[i];
        continuations += (b & 0xC0) == 0x80;
        widest = b > widest ? b : widest;
    }
    Py_ssize_t chars = n - continuations;
    /* lead bytes C2..C3: up to U+00FF; C4..EF: U+0100..U+FFFF; F0..F4: beyond U+FFFF */
    Py_UCS4 maxchar = (any_f0 || widest >= 0xF0) ? 0x10FFFF
                      : (any_c4 || widest >= 0xC4) ? 0xFFFF
                      : (continuations || widest >= 0x80) ? 0xFF : 0x7F;
    PyObject *str = PyUnicode_New(chars, maxchar);
    if (str == NULL) return NULL;
    void *out = PyUnicode_DATA(str);
    Py_ssize_t k = 0;
    i = 0;
    if (maxchar == 0x7F) {
        memcpy(out, s, (size_t)n);
    } else if (maxchar == 0xFF) {
        /* Runs of ASCII are copied eight bytes at a time; the rest is C2/C3 + one byte. */
        Py_UCS1 *o = (Py_UCS1 *)out;
        while (i < n) {
            if (i + 8 <= n && mf_ascii8(s + i)) {
                memcpy(o + k, s + i, 8);
                i += 8;
                k += 8;
                continue;
            }
            uint32_t b = s[i];
            if (b < 0x80) {
                o[k++] = (Py_UCS1)b;
                i += 1;
            } else {
                o[k++] = (Py_UCS1)(((b & 0x1F) << 6) | (s[i + 1] & 0x3F));
                i += 2;
            }
        }
    } else if (maxchar == 0xFFFF) {
        Py_UCS2 *o = (Py_UCS2 *)out;
        while (i < n) {
            if (i + 8 <= n && mf_ascii8(s + i)) {
                for (int j = 0; j < 8; j++) o[k + j] = s[i + j];
                i += 8;
                k += 8;
                continue;
            }
            o[k++] = (Py_UCS2)mf_utf8_next(s, &i);
        }
    } else {
        Py_UCS4 *o = (Py_UCS4 *)out;
        while (i < n) o[k++] = mf_utf8_next(s, &i);
    }
    return str;
}

/* Whether the size bytes at data are all ASCII (eight at a time). */
static inline int mf_is_ascii(const char *data, Py_ssize_t size) {
    Py_ssize_t i = 0;
    uint64_t word;
    for (; i + 8 <= size; i += 8) {
        memcpy(&word, data + i, 8);
        if (word & 0x8080808080808080ULL) return 0;
    }
    for (; i < size; i++)
        if ((uint8_t)data[i] & 0x80) return 0;
    return 1;
}

/*
 * A new str of the size bytes of valid UTF-8 at data (NULL with an exception set): ASCII
 * needs no decoding at all, the rest none of the checks of CPython's decoder.
 */
static inline PyObject *mf_str_new(const char *data, Py_ssize_t size) {
    if (mf_is_ascii(data, size)) {
        PyObject *s = PyUnicode_New(size, 127);
        if (s != NULL) memcpy(PyUnicode_DATA(s), data, (size_t)size);
        return s;
    }
    return mf_str_from_valid_utf8(data, size);
}

#endif /* MCPFAST_UTF8_STR_H */
