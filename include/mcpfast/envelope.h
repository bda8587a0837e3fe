/*
 * JSON-RPC 2.0 envelope rules, checked on a validated simdjson tape: which kind of message
 * an object is, its id, method, error code/message, and where its payload (params, result
 * or error.data) lies on the tape.  Every rule of the JSON-RPC 2.0 specification about the
 * envelope lives here; nothing about MCP.  No Python objects here.
 */
#ifndef MCPFAST_ENVELOPE_H
#define MCPFAST_ENVELOPE_H

#include <stdint.h>
#include <string.h>

#include "mcpfast/tape.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MF_KIND_INVALID = 0,
    MF_KIND_REQUEST = 1,
    MF_KIND_NOTIFICATION = 2,
    MF_KIND_RESPONSE = 3,
    MF_KIND_ERROR = 4,
};

enum {
    MF_ID_ABSENT = 0,
    MF_ID_NULL = 1,
    MF_ID_INT = 2,   /* int64 in id_int */
    MF_ID_UINT = 3,  /* uint64 above INT64_MAX in id_uint */
    MF_ID_STR = 4,   /* id_str / id_len */
    MF_ID_BAD = 5,   /* present but neither string, integer nor null */
};

#define MF_INVALID_REQUEST (-32600)

typedef struct mf_envelope {
    int kind;
    const char *problem;  /* MF_KIND_INVALID: what is wrong (static string) */
    int id_kind;
    int64_t id_int;
    uint64_t id_uint;
    const char *id_str;
    uint32_t id_len;
    const char *method;
    uint32_t method_len;
    size_t payload_start; /* tape range of params / result / error.data; equal when absent */
    size_t payload_end;
    int64_t code;         /* MF_KIND_ERROR */
    const char *message;
    uint32_t message_len;
} mf_envelope;

static inline const char *mf_doc_string(const uint8_t *strings, uint64_t w, uint32_t *len) {
    const uint8_t *p = strings + MF_TAPE_PAYLOAD(w);
    memcpy(len, p, 4);
    return (const char *)(p + 4);
}

static inline int mf_key_is(const char *k, uint32_t n, const char *name, uint32_t name_len) {
    return n == name_len && memcmp(k, name, n) == 0;
}

/* Envelope members, as bits, to find duplicates. */
enum { MF_M_JSONRPC = 1, MF_M_ID = 2, MF_M_METHOD = 4, MF_M_PARAMS = 8, MF_M_RESULT = 16, MF_M_ERROR = 32 };

static inline int mf_invalid(mf_envelope *e, const char *problem) {
    e->kind = MF_KIND_INVALID;
    e->problem = problem;
    return MF_KIND_INVALID;
}

/* Read the error object at tape index i of an error response into e. */
static inline int mf_read_error_object(const uint64_t *tape, const uint8_t *strings, size_t i,
                                       mf_envelope *e) {
    if (MF_TAPE_TYPE(tape[i]) != '{') return mf_invalid(e, "error must be an object");
    size_t end = MF_TAPE_NEXT(tape[i]) - 1, j = i + 1;
    int have_code = 0, have_message = 0;
    while (j < end) {
        uint32_t klen;
        const char *k = mf_doc_string(strings, tape[j], &klen);
        size_t v = j + 1;
        char type = MF_TAPE_TYPE(tape[v]);
        if (mf_key_is(k, klen, "code", 4)) {
            if (have_code) return mf_invalid(e, "duplicate member \"code\" in error");
            if (type != 'l') return mf_invalid(e, "error.code must be an integer");
            e->code = (int64_t)tape[v + 1];
            have_code = 1;
        } else if (mf_key_is(k, klen, "message", 7)) {
            if (have_message) return mf_invalid(e, "duplicate member \"message\" in error");
            if (type != '"') return mf_invalid(e, "error.message must be a string");
            e->message = mf_doc_string(strings, tape[v], &e->message_len);
            have_message = 1;
        } else if (mf_key_is(k, klen, "data", 4)) {
            if (e->payload_end != e->payload_start)
                return mf_invalid(e, "duplicate member \"data\" in error");
            e->payload_start = v;
            e->payload_end = mf_tape_skip(tape, v);
        }
        j = mf_tape_skip(tape, v);
    }
    if (!have_code) return mf_invalid(e, "error.code is missing");
    if (!have_message) return mf_invalid(e, "error.message is missing");
    return MF_KIND_ERROR;
}

/*
 * Classify the value at tape index i as a JSON-RPC 2.0 message.  Fills e (id as far as it
 * could be read, even for an invalid message) and returns e->kind.
 */
static inline int mf_classify(const uint64_t *tape, const uint8_t *strings, size_t i,
                              mf_envelope *e) {
    memset(e, 0, sizeof(*e));
    if (MF_TAPE_TYPE(tape[i]) != '{') return mf_invalid(e, "a message must be a JSON object");
    size_t end = MF_TAPE_NEXT(tape[i]) - 1, j = i + 1;
    unsigned seen = 0;
    size_t jsonrpc_at = 0, method_at = 0, params_at = 0, result_at = 0, error_at = 0;
    const char *duplicate = NULL;
    while (j < end) {
        uint32_t klen;
        const char *k = mf_doc_string(strings, tape[j], &klen);
        size_t v = j + 1;
        unsigned bit = 0;
        switch (klen) {
        case 2:
            if (memcmp(k, "id", 2) == 0) bit = MF_M_ID;
            break;
        case 5:
            if (memcmp(k, "error", 5) == 0) { bit = MF_M_ERROR; error_at = v; }
            break;
        case 6:
            if (memcmp(k, "method", 6) == 0) { bit = MF_M_METHOD; method_at = v; }
            else if (memcmp(k, "params", 6) == 0) { bit = MF_M_PARAMS; params_at = v; }
            else if (memcmp(k, "result", 6) == 0) { bit = MF_M_RESULT; result_at = v; }
            break;
        case 7:
            if (memcmp(k, "jsonrpc", 7) == 0) { bit = MF_M_JSONRPC; jsonrpc_at = v; }
            break;
        default:
            break; /* members JSON-RPC does not define are ignored */
        }
        if (bit) {
            if ((seen & bit) && duplicate == NULL) duplicate = "duplicate member in message";
            seen |= bit;
        }
        if (bit == MF_M_ID && e->id_kind == MF_ID_ABSENT) {
            uint64_t w = tape[v];
            switch (MF_TAPE_TYPE(w)) {
            case 'l': e->id_kind = MF_ID_INT; e->id_int = (int64_t)tape[v + 1]; break;
            case 'u': e->id_kind = MF_ID_UINT; e->id_uint = tape[v + 1]; break;
            case '"': e->id_kind = MF_ID_STR; e->id_str = mf_doc_string(strings, w, &e->id_len); break;
            case 'n': e->id_kind = MF_ID_NULL; break;
            default: e->id_kind = MF_ID_BAD; break;
            }
        }
        j = mf_tape_skip(tape, v);
    }
    if (duplicate) return mf_invalid(e, duplicate);
    if (!(seen & MF_M_JSONRPC)) return mf_invalid(e, "missing member \"jsonrpc\"");
    {
        uint32_t n;
        if (MF_TAPE_TYPE(tape[jsonrpc_at]) != '"') return mf_invalid(e, "jsonrpc must be \"2.0\"");
        const char *s = mf_doc_string(strings, tape[jsonrpc_at], &n);
        if (!mf_key_is(s, n, "2.0", 3)) return mf_invalid(e, "jsonrpc must be \"2.0\"");
    }
    if (e->id_kind == MF_ID_BAD) return mf_invalid(e, "id must be a string or an integer");
    if (seen & MF_M_METHOD) {
        if (seen & (MF_M_RESULT | MF_M_ERROR))
            return mf_invalid(e, "a message cannot have both method and result/error");
        if (MF_TAPE_TYPE(tape[method_at]) != '"') return mf_invalid(e, "method must be a string");
        e->method = mf_doc_string(strings, tape[method_at], &e->method_len);
        if (seen & MF_M_PARAMS) {
            char t = MF_TAPE_TYPE(tape[params_at]);
            if (t != '{' && t != '[') return mf_invalid(e, "params must be an object or an array");
            e->payload_start = params_at;
            e->payload_end = mf_tape_skip(tape, params_at);
        }
        if (e->id_kind == MF_ID_ABSENT) return e->kind = MF_KIND_NOTIFICATION;
        if (e->id_kind == MF_ID_NULL) return mf_invalid(e, "a request id must not be null");
        return e->kind = MF_KIND_REQUEST;
    }
    if ((seen & (MF_M_RESULT | MF_M_ERROR)) == (MF_M_RESULT | MF_M_ERROR))
        return mf_invalid(e, "a response cannot have both result and error");
    if (seen & MF_M_RESULT) {
        if (e->id_kind == MF_ID_ABSENT) return mf_invalid(e, "a response must have an id");
        if (e->id_kind == MF_ID_NULL) return mf_invalid(e, "a result response must not have a null id");
        e->payload_start = result_at;
        e->payload_end = mf_tape_skip(tape, result_at);
        return e->kind = MF_KIND_RESPONSE;
    }
    if (seen & MF_M_ERROR) {
        if (e->id_kind == MF_ID_ABSENT) return mf_invalid(e, "a response must have an id");
        return mf_read_error_object(tape, strings, error_at, e);
    }
    return mf_invalid(e, "a message needs method, result or error");
}

#ifdef __cplusplus
}
#endif

#endif /* MCPFAST_ENVELOPE_H */
