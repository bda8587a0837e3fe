/*
 * Scans of ASCII text for the strict fast paths of the HTTP request framer and response
 * reader: where a run of visible ASCII and spaces (0x20..0x7e, the bytes a header value may
 * hold there) ends, sixteen bytes at a time where SSE2 is there (every x86-64 CPU), a byte
 * at a time elsewhere; which bytes are token characters.
 */
#ifndef MCPFAST_ASCII_SCAN_H
#define MCPFAST_ASCII_SCAN_H

#include <stddef.h>

#include "mcpfast/compiler.h"

/* The first byte in [p, end) outside 0x20..0x7e, or end. Reads nothing past end. */
MF_ALWAYS_INLINE const char *mf_visible_run_end(const char *p, const char *end) {
#if MF_SSE2
    const __m128i space = _mm_set1_epi8(0x20);
    const __m128i tilde = _mm_set1_epi8(0x7e);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)p);
        /* Signed compares: 0x80..0xff are negative, so below 0x20 as well; above 0x7e
           is then 0x7f alone. */
        int flagged = _mm_movemask_epi8(
            _mm_or_si128(_mm_cmplt_epi8(x, space), _mm_cmpgt_epi8(x, tilde)));
        if (flagged) return p + mf_ctz64((unsigned)flagged);
        p += 16;
    }
#endif
    while (p < end && (unsigned char)*p >= 0x20 && (unsigned char)*p <= 0x7e) p++;
    return p;
}

/* RFC 9110 token characters (header names): 1 for each byte that is one,
   !#$%&'*+-.^_`|~, digits and letters. */
static const unsigned char mf_tchar[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

#endif /* MCPFAST_ASCII_SCAN_H */
