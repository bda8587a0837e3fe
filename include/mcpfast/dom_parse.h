/*
 * The one place mcpfast touches simdjson: validate a frame with simdjson's DOM parser and
 * hand out the resulting tape.  The DOM parser runs both stages over the whole input, so
 * the frame is fully validated (UTF-8, grammar, numbers, string escapes) before anything
 * is built; nothing is skipped unchecked.  No Python objects here.
 */
#ifndef MCPFAST_DOM_PARSE_H
#define MCPFAST_DOM_PARSE_H

#include <stdint.h>
#include <stddef.h>
#include <new>

#include "simdjson.h"

#define MF_PADDING ((size_t)simdjson::SIMDJSON_PADDING)

typedef struct mf_parser {
    simdjson::dom::parser parser;
} mf_parser;

/* Error kinds of mf_parse, mapped from simdjson's many codes. */
enum {
    MF_PARSE_OK = 0,
    MF_PARSE_INVALID_JSON = 1,  /* grammar, strings, literals, truncation, empty input */
    MF_PARSE_BAD_UTF8 = 2,
    MF_PARSE_TOO_DEEP = 3,
    MF_PARSE_NUMBER = 4,        /* malformed or out-of-range number */
    MF_PARSE_BIGINT = 5,        /* integer beyond 64 bits */
    MF_PARSE_TOO_LARGE = 6,
    MF_PARSE_NO_MEMORY = 7,
};

/* A parser whose documents may nest max_depth levels; NULL when memory is short. */
static inline mf_parser *mf_parser_new(size_t max_depth) {
    mf_parser *p = new (std::nothrow) mf_parser();
    if (p != NULL &&
        p->parser.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, max_depth) != simdjson::SUCCESS) {
        delete p;
        p = NULL;
    }
    return p;
}

static inline void mf_parser_free(mf_parser *p) { delete p; }

/*
 * Parse len bytes at buf, which must be readable up to buf + len + MF_PADDING.
 * On success the tape and string area stay valid until the next call.
 * *message receives simdjson's own description of a failure.
 */
static inline int mf_parse(mf_parser *p, const uint8_t *buf, size_t len, const char **message) {
    simdjson::error_code err = p->parser.parse(buf, len, false).error();
    *message = simdjson::error_message(err);
    switch (err) {
    case simdjson::SUCCESS:
        return MF_PARSE_OK;
    case simdjson::UTF8_ERROR:
        return MF_PARSE_BAD_UTF8;
    case simdjson::DEPTH_ERROR:
        return MF_PARSE_TOO_DEEP;
    case simdjson::NUMBER_ERROR:
    case simdjson::NUMBER_OUT_OF_RANGE:
        return MF_PARSE_NUMBER;
    case simdjson::BIGINT_ERROR:
        return MF_PARSE_BIGINT;
    case simdjson::CAPACITY:
        return MF_PARSE_TOO_LARGE;
    case simdjson::MEMALLOC:
        return MF_PARSE_NO_MEMORY;
    default:
        return MF_PARSE_INVALID_JSON;
    }
}

static inline const uint64_t *mf_parser_tape(const mf_parser *p) { return p->parser.doc.tape.get(); }

static inline const uint8_t *mf_parser_strings(const mf_parser *p) {
    return p->parser.doc.string_buf.get();
}

#endif /* MCPFAST_DOM_PARSE_H */
