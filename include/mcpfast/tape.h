/*
 * mf_tape: one JSON value in simdjson's DOM tape format, as a lazy payload.
 *
 * The decoder validates a whole frame with simdjson's DOM parser.  Each lazy field --
 * params, result, error.data -- first *borrows* the parser's tape: an mf_tape whose words
 * and strings point into the parser's own buffers (a view, no copy).  The parser's buffers
 * are reused by the next decode, so before it parses, every view still alive is turned
 * into an *owned* copy: one block holding the header, the tape words of the value and the
 * string bytes they point to (messages.pyx keeps the list of views).  A payload read before
 * the next decode -- the usual case -- is built from the view and never copied.
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
 * Both forms keep the words as they were in the document; tape_base and string_base turn
 * their container indices and string offsets into positions within words and strings.
 * No Python objects here.
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
    const uint64_t *words;    /* the value's tape words; words[0] is its first word */
    const uint8_t *strings;   /* the string area, as seen from string_base */
    uint64_t tape_base;       /* index words[0] had in the document's tape */
    uint64_t string_base;     /* offset strings[0] had in the document's string buffer */
    uint32_t ntape;           /* words of the value */
    uint32_t nstrings;        /* owned copies: bytes of string area after the words */
} mf_tape;

#define MF_TAPE_TYPE(w) ((char)((uint64_t)(w) >> 56))
#define MF_TAPE_PAYLOAD(w) ((uint64_t)(w) & 0x00FFFFFFFFFFFFFFULL)
#define MF_TAPE_NEXT(w) ((uint32_t)((uint64_t)(w) & 0xFFFFFFFFULL))
#define MF_TAPE_COUNT(w) ((uint32_t)(((uint64_t)(w) >> 32) & 0xFFFFFFULL))
#define MF_TAPE_COUNT_SATURATED 0xFFFFFFU

/* The string at tape word w: *len receives its byte length. */
static inline const char *mf_tape_string(const mf_tape *t, uint64_t w, uint32_t *len) {
    const uint8_t *p = t->strings + (MF_TAPE_PAYLOAD(w) - t->string_base);
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

/* A view of the value spanning tape[start, end) of a parsed document (no copy). */
static inline void mf_tape_view(mf_tape *t, const uint64_t *tape, size_t start, size_t end,
                                const uint8_t *string_buf) {
    t->words = tape + start;
    t->strings = string_buf;
    t->tape_base = start;
    t->string_base = 0;
    t->ntape = (uint32_t)(end - start);
    t->nstrings = 0;
}

/*
 * Where the value a tape (view or copy) holds keeps its string bytes: simdjson writes
 * strings in document order, so they are the range from the first string word to the end
 * of the last one, [*lo, *hi) in document offsets.  Returns the bytes an owned copy needs,
 * or 0 when the value is too large for 32-bit sizes.
 */
static inline size_t mf_tape_copy_size(const mf_tape *t, size_t *lo, size_t *hi) {
    size_t i = 0, n = t->ntape, last = SIZE_MAX;
    *lo = *hi = 0;
    while (i < n) {
        char type = MF_TAPE_TYPE(t->words[i]);
        if (type == '"') {
            if (last == SIZE_MAX) *lo = (size_t)MF_TAPE_PAYLOAD(t->words[i]);
            last = (size_t)MF_TAPE_PAYLOAD(t->words[i]);
        }
        /* a number's value word follows its tag and is not a tagged word */
        i += (type == 'l' || type == 'u' || type == 'd') ? 2 : 1;
    }
    if (last != SIZE_MAX) {
        uint32_t len;
        memcpy(&len, t->strings + (last - t->string_base), 4);
        *hi = last + 4 + len + 1;
    }
    if (*hi - *lo > 0xFFFFFFFFu) return 0;
    /* 8 spare bytes: readers may load a whole word from the last string's start */
    return sizeof(mf_tape) + (size_t)n * 8 + (*hi - *lo) + 8;
}

/*
 * Copy the value of t into block, which has room for mf_tape_copy_size bytes, and make
 * block an owned mf_tape of it.  The words are copied as they are (readers subtract
 * tape_base and string_base), so the copy is two memcpy calls.
 */
static inline mf_tape *mf_tape_own(void *block, const mf_tape *t, size_t lo, size_t hi) {
    mf_tape *copy = (mf_tape *)block;
    size_t ntape = t->ntape, nstrings = hi - lo;
    uint64_t *words = (uint64_t *)(copy + 1);
    uint8_t *strings = (uint8_t *)(words + ntape);
    memcpy(words, t->words, ntape * 8);
    if (nstrings) memcpy(strings, t->strings + (lo - t->string_base), nstrings);
    memset(strings + nstrings, 0, 8);
    copy->words = words;
    copy->strings = strings;
    copy->tape_base = t->tape_base;
    copy->string_base = lo;
    copy->ntape = (uint32_t)ntape;
    copy->nstrings = (uint32_t)nstrings;
    return copy;
}

#ifdef __cplusplus
}
#endif

#endif /* MCPFAST_TAPE_H */
