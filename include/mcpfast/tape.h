/*
 * mf_tape: a self-contained copy of one JSON value in simdjson's DOM tape format.
 *
 * The decoder validates a whole frame with simdjson's DOM parser, then copies the tape
 * words (and the string bytes they point to) of each lazy field -- params, result,
 * error.data -- into one malloc'd mf_tape.  Building Python objects later walks this copy:
 * the parse that was already done is reused, nothing is parsed twice.
 *
 * Tape words (see simdjson doc/tape.md): the top 8 bits are a type character, the low
 * 56 bits a payload.
 *   '{' / '['  payload bits 0..31: index of the word after the matching '}' / ']'
 *              payload bits 32..55: number of members / elements (saturates at 0xFFFFFF)
 *   '}' / ']'  payload: index of the matching '{' / '['
 *   '"'        payload: byte offset into the string area; there, a 4-byte little-endian
 *              length, the UTF-8 bytes (already unescaped), then a NUL
 *   'l' 'u' 'd' the next word holds the int64 / uint64 / double bits
 *   't' 'f' 'n' true / false / null
 * An mf_tape keeps the words as they were in the document; tape_base and string_base turn
 * their container indices and string offsets into positions within the copy.  No Python
 * objects here.
 */
#ifndef MCPFAST_TAPE_H
#define MCPFAST_TAPE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mf_tape {
    uint32_t ntape;        /* tape words */
    uint32_t nstrings;     /* bytes of string area, which follows words[ntape] */
    uint64_t tape_base;    /* index the first word had in the document's tape */
    uint64_t string_base;  /* offset the string area had in the document's string buffer */
    uint64_t words[];
} mf_tape;

#define MF_TAPE_TYPE(w) ((char)((uint64_t)(w) >> 56))
#define MF_TAPE_PAYLOAD(w) ((uint64_t)(w) & 0x00FFFFFFFFFFFFFFULL)
#define MF_TAPE_NEXT(w) ((uint32_t)((uint64_t)(w) & 0xFFFFFFFFULL))
#define MF_TAPE_COUNT(w) ((uint32_t)(((uint64_t)(w) >> 32) & 0xFFFFFFULL))
#define MF_TAPE_COUNT_SATURATED 0xFFFFFFU

static inline const uint8_t *mf_tape_strings(const mf_tape *t) {
    return (const uint8_t *)(t->words + t->ntape);
}

/* The string at tape word w: *len receives its byte length. */
static inline const char *mf_tape_string(const mf_tape *t, uint64_t w, uint32_t *len) {
    const uint8_t *p = mf_tape_strings(t) + (MF_TAPE_PAYLOAD(w) - t->string_base);
    uint32_t n;
    memcpy(&n, p, 4);
    *len = n;
    return (const char *)(p + 4);
}

/* Index, within t->words, of the word after the container that starts with word w. */
static inline size_t mf_tape_container_next(const mf_tape *t, uint64_t w) {
    return (size_t)(MF_TAPE_NEXT(w) - t->tape_base);
}

/* Index of the word after the value that starts at index i of a tape. */
static inline size_t mf_tape_skip(const uint64_t *tape, size_t i) {
    switch (MF_TAPE_TYPE(tape[i])) {
    case '{':
    case '[':
        return MF_TAPE_NEXT(tape[i]);
    case 'l':
    case 'u':
    case 'd':
        return i + 2;
    default:
        return i + 1;
    }
}

/*
 * Where the value spanning tape[start, end) of a parsed document keeps its string bytes:
 * simdjson writes strings in document order, so they are the range from the first string
 * word to the end of the last one.  Returns the bytes an mf_tape copy of the value needs,
 * or 0 when the value is too large for 32-bit sizes.
 */
static inline size_t mf_tape_copy_size(const uint64_t *tape, size_t start, size_t end,
                                       const uint8_t *string_buf, size_t *lo, size_t *hi) {
    size_t i = start, last = SIZE_MAX;
    *lo = *hi = 0;
    while (i < end) {
        char type = MF_TAPE_TYPE(tape[i]);
        if (type == '"') {
            if (last == SIZE_MAX) *lo = (size_t)MF_TAPE_PAYLOAD(tape[i]);
            last = (size_t)MF_TAPE_PAYLOAD(tape[i]);
        }
        /* a number's value word follows its tag and is not a tagged word */
        i += (type == 'l' || type == 'u' || type == 'd') ? 2 : 1;
    }
    if (last != SIZE_MAX) {
        uint32_t n;
        memcpy(&n, string_buf + last, 4);
        *hi = last + 4 + n + 1;
    }
    if (end - start > 0xFFFFFFFFu || *hi - *lo > 0xFFFFFFFFu) return 0;
    /* 8 spare bytes: readers may load a whole word from the last string's start */
    return sizeof(mf_tape) + (end - start) * 8 + (*hi - *lo) + 8;
}

/*
 * Copy that value into t, which has room for mf_tape_copy_size bytes.  The words are
 * copied as they are (the reader subtracts tape_base and string_base), so the copy is two
 * memcpy calls.
 */
static inline void mf_tape_fill(mf_tape *t, const uint64_t *tape, size_t start, size_t end,
                                const uint8_t *string_buf, size_t lo, size_t hi) {
    size_t ntape = end - start, nstrings = hi - lo;
    t->ntape = (uint32_t)ntape;
    t->nstrings = (uint32_t)nstrings;
    t->tape_base = start;
    t->string_base = lo;
    memcpy(t->words, tape + start, ntape * 8);
    uint8_t *strings = (uint8_t *)(t->words + ntape);
    if (nstrings) memcpy(strings, string_buf + lo, nstrings);
    memset(strings + nstrings, 0, 8);
}

#ifdef __cplusplus
}
#endif

#endif /* MCPFAST_TAPE_H */
