/*
 * Direct-mapped caches of short strings, for the decoder's keys, method names and short
 * string values.  A slot keeps the first 16 bytes of a string's UTF-8 and its length
 * beside an owned reference to the str, so a hit on a string of up to 16 bytes is decided
 * by two word compares without touching the str object; a longer string is cached only
 * when it is ASCII (its str then holds the same bytes, compared from byte 16 on).
 *
 * The hit path is small and inlined at each use; filling a slot (a miss) is out of line.
 * Strings given here must be valid UTF-8 with 8 readable bytes past their end (simdjson's
 * string buffer keeps padding; tape copies keep 8 spare bytes after their last string).
 */
#ifndef MCPFAST_STR_CACHE_H
#define MCPFAST_STR_CACHE_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "mcpfast/compiler.h"
#include "mcpfast/utf8_str.h"

#define MF_STR_CACHE_BITS 11
#define MF_STR_CACHE_SLOTS (1 << MF_STR_CACHE_BITS)

typedef struct {
    uint64_t head0;
    uint64_t head1;
    Py_ssize_t size;
    PyObject *value;  /* owned; NULL: empty slot */
} mf_str_slot;

/* The first min(size, 8) bytes at data as a word, zero-extended (loads 8 bytes). */
MF_ALWAYS_INLINE uint64_t mf_str_head(const char *data, Py_ssize_t size) {
    uint64_t word;
    memcpy(&word, data, 8);
    if (size < 8) word &= (((uint64_t)1) << (8 * size)) - 1;
    return word;
}

/* A miss: make the str, keep it in the slot (interned when asked); a new reference. */
static MF_NOINLINE PyObject *mf_str_cache_fill(mf_str_slot *slot, const char *data, Py_ssize_t size,
                                               uint64_t head0, uint64_t head1, int intern) {
    PyObject *s = mf_str_new(data, size);
    if (s == NULL || (size > 16 && !PyUnicode_IS_ASCII(s)))
        return s;  /* longer non-ASCII strings are not kept */
    if (intern) {
        PyUnicode_InternInPlace(&s);
        if (s == NULL) return NULL;
    }
    Py_INCREF(s);
    Py_XDECREF(slot->value);
    slot->value = s;
    slot->size = size;
    slot->head0 = head0;
    slot->head1 = head1;
    return s;
}

/* The str of the size bytes at data, from cache when it holds it; a new reference. */
MF_ALWAYS_INLINE PyObject *mf_str_cached(mf_str_slot *cache, const char *data, Py_ssize_t size,
                                         int intern) {
    uint64_t head0 = mf_str_head(data, size);
    uint64_t head1 = size > 8 ? mf_str_head(data + 8, size - 8) : 0;
    /* Independent multiplies (no dependency chain) of the two heads, the tail and the size. */
    uint64_t h = head0 * 0x9E3779B97F4A7C15ULL;
    h ^= (head1 + (uint64_t)size) * 0xC2B2AE3D27D4EB4FULL;
    if (size > 16) {
        uint64_t tail;
        memcpy(&tail, data + size - 8, 8);
        h ^= tail * 0x165667B19E3779F9ULL;
    }
    /* The slot from the product's top bits: a multiply carries each input bit only upwards,
     * so only the top bits depend on every byte (bits 40..50 missed the last byte of each
     * head: keys of 8 or 16 bytes that differ in their last byte shared one slot). */
    mf_str_slot *slot = &cache[h >> (64 - MF_STR_CACHE_BITS)];
    if (MF_LIKELY(slot->value != NULL && slot->size == size && slot->head0 == head0 &&
                  slot->head1 == head1) &&
        (size <= 16 ||
         memcmp((const char *)PyUnicode_DATA(slot->value) + 16, data + 16, (size_t)(size - 16)) == 0)) {
        Py_INCREF(slot->value);
        return slot->value;
    }
    return mf_str_cache_fill(slot, data, size, head0, head1, intern);
}

#endif /* MCPFAST_STR_CACHE_H */
