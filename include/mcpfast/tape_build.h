/*
 * Python objects from a payload's tape (tape.h): the one reader that turns a decoded
 * params / result / error.data into dicts, lists, str, int, float, bool and None.
 *
 * Strings go through the direct-mapped caches of str_cache.h: keys (interned, so that
 * equal keys are one object) and short values.  Small objects are built from *shapes*
 * (dict_shapes.h): a copy of a model dict of their keys, by the keys' identities (they
 * come interned from the key cache), with the values written in place.
 *
 * The caller must keep the tape's buffers from being reused while it reads them (see
 * messages.pyx: a view of the parser's tape is read with the collector paused).
 */
#ifndef MCPFAST_TAPE_BUILD_H
#define MCPFAST_TAPE_BUILD_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "mcpfast/compiler.h"
#include "mcpfast/cpython_compat.h"
#include "mcpfast/dict_shapes.h"
#include "mcpfast/str_cache.h"
#include "mcpfast/tape.h"
#include "mcpfast/utf8_str.h"

/* Keys and method names up to this length are cached (and interned). */
#define MF_KEY_CACHE_MAX_LENGTH 64
/* String values up to this length are cached (not interned): "object", "text", ... */
#define MF_VALUE_CACHE_MAX_LENGTH 16

static mf_str_slot mf_key_cache[MF_STR_CACHE_SLOTS];
static mf_str_slot mf_value_cache[MF_STR_CACHE_SLOTS];

/* The str of a key or method name (interned); a new reference. */
MF_ALWAYS_INLINE PyObject *mf_key_str(const char *data, Py_ssize_t size) {
    if (size > MF_KEY_CACHE_MAX_LENGTH) return mf_str_new(data, size);
    return mf_str_cached(mf_key_cache, data, size, 1);
}

/* The str of a string value; a new reference. */
MF_ALWAYS_INLINE PyObject *mf_value_str(const char *data, Py_ssize_t size) {
    if (size > MF_VALUE_CACHE_MAX_LENGTH) return mf_str_new(data, size);
    return mf_str_cached(mf_value_cache, data, size, 0);
}

/* ---------------------------------------------------------------------------------------
 * Shapes (dict_shapes.h): this reader's table of models. */

/* 1024 slots: a message's dozen or two shapes rarely share one (two shapes that alternate
   in a slot make neither a model, and which slot a shape takes depends on where its keys
   were allocated, so a table too small is slow only sometimes). */
#define MF_SHAPE_BITS 10
#define MF_SHAPE_SLOTS (1 << MF_SHAPE_BITS)
/* Objects with fewer or more members are built with PyDict_SetItem.  A single member is
   worth a model only where models are cloned (mf_dict_clone_filled): a PyDict_Copy and a
   write cost about what one insertion does. */
#define MF_SHAPE_MIN_KEYS (MF_DICT_CLONE ? 1 : 2)
#define MF_SHAPE_MAX_KEYS MF_SHAPE_CHECKED_KEYS

static mf_shape_slot mf_shapes[MF_SHAPE_SLOTS];

/* The dict of the n members keys[k]: values[k] (hash h of the keys); steals them all. */
MF_ALWAYS_INLINE PyObject *mf_object_of_shape(PyObject **keys, PyObject **values, Py_ssize_t n,
                                              uint64_t h) {
    return mf_dict_of_shape(&mf_shapes[h >> (64 - MF_SHAPE_BITS)], keys, values, n, h);
}

/* How many objects were made from models since shapes were last turned on or off. */
static uint64_t mf_object_shape_hits(void) { return mf_shapes_hits(mf_shapes, MF_SHAPE_SLOTS); }

/* ---------------------------------------------------------------------------------------
 * The reader. */

static PyObject *mf_build_object(const mf_tape *t, size_t *i);
static PyObject *mf_build_array(const mf_tape *t, size_t *i);

/* Python object for the value at index *i of t (advanced past it); a new reference. */
MF_ALWAYS_INLINE PyObject *mf_build_value(const mf_tape *t, size_t *i) {
    size_t j = *i;
    uint64_t w = t->words[j];
    uint32_t n;
    const char *s;
    double d;
    switch (MF_TAPE_TYPE(w)) {
    case '"':
        *i = j + 1;
        s = mf_tape_string(t, w, &n);
        return mf_value_str(s, n);
    case 'l':
        *i = j + 2;
        return PyLong_FromLongLong((long long)(int64_t)t->words[j + 1]);
    case 'u':
        *i = j + 2;
        return PyLong_FromUnsignedLongLong((unsigned long long)t->words[j + 1]);
    case 'd':
        *i = j + 2;
        memcpy(&d, &t->words[j + 1], 8);
        return PyFloat_FromDouble(d);
    case '{':
        return mf_build_object(t, i);
    case '[':
        return mf_build_array(t, i);
    case 't':
        *i = j + 1;
        Py_RETURN_TRUE;
    case 'f':
        *i = j + 1;
        Py_RETURN_FALSE;
    default:  /* 'n' */
        *i = j + 1;
        Py_RETURN_NONE;
    }
}

static MF_NOINLINE PyObject *mf_build_object(const mf_tape *t, size_t *i) {
    const uint64_t *words = t->words;
    uint64_t w = words[*i];
    uint32_t count = MF_TAPE_COUNT(w);
    size_t end = mf_tape_container_next(t, w) - 1, j = *i + 1;
    const char *s;
    uint32_t len;
    PyObject *d, *key, *value;
    if (count >= MF_SHAPE_MIN_KEYS && count <= MF_SHAPE_MAX_KEYS && mf_shapes_ok) {
        PyObject *keys[MF_SHAPE_MAX_KEYS], *values[MF_SHAPE_MAX_KEYS];
        Py_ssize_t n = 0;
        uint64_t h = count;
        for (; j < end && n < MF_SHAPE_MAX_KEYS; n++) {
            s = mf_tape_string(t, words[j], &len);
            keys[n] = mf_key_str(s, len);
            if (keys[n] == NULL) goto fail;
            j++;
            values[n] = mf_build_value(t, &j);
            if (values[n] == NULL) {
                Py_DECREF(keys[n]);
                goto fail;
            }
            h = mf_shape_step(h, keys[n]);
        }
        *i = end + 1;
        return mf_object_of_shape(keys, values, n, h);
    fail:
        while (n-- > 0) {
            Py_DECREF(keys[n]);
            Py_DECREF(values[n]);
        }
        return NULL;
    }
    d = mf_dict_new_presized(count);
    if (d == NULL) return NULL;
    while (j < end) {
        s = mf_tape_string(t, words[j], &len);
        key = mf_key_str(s, len);
        if (key == NULL) goto failed;
        j++;
        value = mf_build_value(t, &j);
        if (value == NULL) {
            Py_DECREF(key);
            goto failed;
        }
        if (PyDict_SetItem(d, key, value) < 0) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto failed;
        }
        Py_DECREF(key);
        Py_DECREF(value);
    }
    *i = end + 1;
    return d;
failed:
    Py_DECREF(d);
    return NULL;
}

static MF_NOINLINE PyObject *mf_build_array(const mf_tape *t, size_t *i) {
    uint64_t w = t->words[*i];
    uint32_t count = MF_TAPE_COUNT(w), k;
    size_t end = mf_tape_container_next(t, w) - 1, j = *i + 1;
    PyObject *list, *value;
    if (count < MF_TAPE_COUNT_SATURATED) {
        /* The tape knows the length: the list is made at its size. */
        list = PyList_New(count);
        if (list == NULL) return NULL;
        for (k = 0; k < count; k++) {
            value = mf_build_value(t, &j);
            if (value == NULL) goto failed;
            PyList_SET_ITEM(list, k, value);
        }
    } else {
        list = PyList_New(0);
        if (list == NULL) return NULL;
        while (j < end) {
            value = mf_build_value(t, &j);
            if (value == NULL) goto failed;
            if (PyList_Append(list, value) < 0) {
                Py_DECREF(value);
                goto failed;
            }
            Py_DECREF(value);
        }
    }
    *i = end + 1;
    return list;
failed:
    Py_DECREF(list);  /* items not set yet are NULL, which the list's dealloc skips */
    return NULL;
}


/* Shapes on (only where mf_shapes_check passed) or off; models are dropped either way. */
static int mf_shapes_enable(int on) {
    mf_shapes_clear(mf_shapes, MF_SHAPE_SLOTS);
    return on ? mf_shapes_check() : (mf_shapes_ok = 0);
}

#endif /* MCPFAST_TAPE_BUILD_H */
