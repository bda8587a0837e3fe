/*
 * Python objects from a payload's tape (tape.h): the one reader that turns a decoded
 * params / result / error.data into dicts, lists, str, int, float, bool and None.
 *
 * Strings go through the direct-mapped caches of str_cache.h: keys (interned, so that
 * equal keys are one object) and short values.  Small objects are built from *shapes*:
 * the first time a sequence of keys (by identity: they come interned from the key cache)
 * is seen twice in a row at its slot, a model dict of those keys with None values is kept;
 * later objects of that shape are a copy of the model (PyDict_Copy: one block copied,
 * no hashing, no probing) whose values are then written in place.  That write needs the
 * dict's entry layout (cpython_compat.h), so it is used only where mf_shapes_check() found
 * at import that a filled copy is exactly the dict PyDict_SetItem would have built;
 * elsewhere every object is built with PyDict_SetItem.
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
 * Shapes: model dicts of small objects' key sequences. */

#define MF_SHAPE_BITS 8
#define MF_SHAPE_SLOTS (1 << MF_SHAPE_BITS)
/* Objects with fewer or more members are built with PyDict_SetItem. */
#define MF_SHAPE_MIN_KEYS 2
#define MF_SHAPE_MAX_KEYS 8

typedef struct {
    uint64_t model_hash;  /* hash of the model's keys */
    PyObject *model;      /* owned; its keys mapped to None; NULL: none */
    uint64_t seen_hash;   /* the last other shape that missed here (made the model when
                             it comes twice in a row) */
} mf_shape_slot;

static mf_shape_slot mf_shapes[MF_SHAPE_SLOTS];
static int mf_shapes_ok = 0;

MF_ALWAYS_INLINE uint64_t mf_shape_step(uint64_t h, PyObject *key) {
    return (h ^ (uint64_t)(uintptr_t)key) * 0x9E3779B97F4A7C15ULL;
}

/*
 * A copy of model with values[k] in place of the k-th value; steals keys[k] and values[k]
 * on success.  NULL without an exception when model does not hold exactly these n keys
 * (nothing stolen then), NULL with one when the copy failed (nothing stolen either).
 * PyDict_Copy of a compact dict copies its keys object as one block: no hashing, no
 * probing, which is most of what building the dict item by item costs.
 */
MF_ALWAYS_INLINE PyObject *mf_dict_fill(PyObject *model, PyObject **keys, PyObject **values, Py_ssize_t n) {
    mf_dict_entries e;
    Py_ssize_t k;
    int track = 0;
    PyObject *d = PyDict_Copy(model);
    if (d == NULL) return NULL;
    if (!mf_dict_entries_of(d, &e) || e.count != n) goto mismatch;
    for (k = 0; k < n; k++)
        if (e.slot[k * e.stride] != keys[k]) goto mismatch;
    for (k = 0; k < n; k++) {
        PyObject **slot = e.slot + k * e.stride + 1;
        PyObject *old = *slot;
        *slot = values[k];
        Py_DECREF(old);
        Py_DECREF(keys[k]);  /* the copy holds its own reference */
        /* the collector must see a dict holding containers (the values built here that
           it tracks: dicts and lists), as PyDict_SetItem ensures */
        track |= PyType_IS_GC(Py_TYPE(values[k]));
    }
    /* A copy of a model is never tracked yet (a model holds no containers, so neither
       PyDict_Copy nor the collector tracks it; mf_shape_fill_works checks it at import):
       tracked here exactly when it holds one, without asking the collector first. */
    if (track) PyObject_GC_Track(d);
    return d;
mismatch:
    Py_DECREF(d);
    return NULL;
}

/* Keep a model of the n distinct keys of d's shape in slot; on failure simply none. */
static MF_NOINLINE void mf_shape_remember(mf_shape_slot *slot, uint64_t h, PyObject **keys,
                                          Py_ssize_t n) {
    Py_ssize_t k;
    PyObject *model = mf_dict_new_presized(n);
    if (model == NULL) goto failed;
    for (k = 0; k < n; k++)
        if (PyDict_SetItem(model, keys[k], Py_None) < 0) goto failed;
    Py_XSETREF(slot->model, model);
    slot->model_hash = h;
    return;
failed:
    Py_XDECREF(model);
    PyErr_Clear();  /* a model is an optimisation: without one, objects are still built */
}

/* The dict of the n members keys[k]: values[k] (hash h of the keys); steals them all. */
MF_ALWAYS_INLINE PyObject *mf_dict_of_shape(PyObject **keys, PyObject **values, Py_ssize_t n, uint64_t h) {
    mf_shape_slot *slot = &mf_shapes[h >> (64 - MF_SHAPE_BITS)];
    Py_ssize_t k;
    PyObject *d;
    if (slot->model_hash == h && slot->model != NULL) {
        d = mf_dict_fill(slot->model, keys, values, n);
        if (d != NULL) return d;
        if (PyErr_Occurred()) goto fail;
    }
    d = mf_dict_new_presized(n);
    if (d == NULL) goto fail;
    for (k = 0; k < n; k++) {
        if (PyDict_SetItem(d, keys[k], values[k]) < 0) {
            Py_DECREF(d);
            goto fail;
        }
    }
    if (slot->seen_hash == h) {
        /* Seen twice in a row here: worth a model, when no key was repeated. */
        if (PyDict_GET_SIZE(d) == n) mf_shape_remember(slot, h, keys, n);
    } else {
        slot->seen_hash = h;
    }
fail:
    for (k = 0; k < n; k++) {
        Py_DECREF(keys[k]);
        Py_DECREF(values[k]);
    }
    return d;
}

/* Forget every model (for tests, and to release them). */
static void mf_shapes_clear(void) {
    int k;
    for (k = 0; k < MF_SHAPE_SLOTS; k++) {
        Py_CLEAR(mf_shapes[k].model);
        mf_shapes[k].model_hash = mf_shapes[k].seen_hash = 0;
    }
}

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
    /* A single member is cheaper to insert than a model is to copy. */
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
        return mf_dict_of_shape(keys, values, n, h);
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

/* Whether d and expected hold the same items in the same order. */
static int mf_same_items(PyObject *d, PyObject *expected) {
    Py_ssize_t pos = 0, epos = 0;
    PyObject *key, *value, *ekey, *evalue;
    if (PyDict_GET_SIZE(d) != PyDict_GET_SIZE(expected)) return 0;
    while (PyDict_Next(expected, &epos, &ekey, &evalue)) {
        if (!PyDict_Next(d, &pos, &key, &value) || key != ekey || value != evalue) return 0;
        if (PyDict_GetItemWithError(d, ekey) != evalue) return 0;
    }
    return !PyDict_Next(d, &pos, &key, &value);
}

/*
 * Whether a dict filled from a model of n keys is exactly the dict PyDict_SetItem builds
 * (items, order, lookups, collector tracking), stays so when it then grows and shrinks,
 * and leaves the model as it was.
 */
static int mf_shape_fill_works(Py_ssize_t n) {
    PyObject *keys[MF_SHAPE_MAX_KEYS], *values[MF_SHAPE_MAX_KEYS];
    PyObject *model = NULL, *filled = NULL, *expected = NULL, *extra = NULL;
    Py_ssize_t k, made = 0;
    int ok = 0;
    model = PyDict_New();
    expected = PyDict_New();
    if (model == NULL || expected == NULL) goto done;
    for (; made < n; made++) {
        keys[made] = PyUnicode_FromFormat("mf_shape_check_%zd", made);
        /* one container value: the filled dict must be tracked by the collector */
        values[made] = made == n - 1 ? PyList_New(0) : PyLong_FromSsize_t(1000 + made);
        if (keys[made] == NULL || values[made] == NULL) {
            Py_XDECREF(keys[made]);
            Py_XDECREF(values[made]);
            goto done;
        }
        PyUnicode_InternInPlace(&keys[made]);
        if (PyDict_SetItem(model, keys[made], Py_None) < 0) goto done;
        if (PyDict_SetItem(expected, keys[made], values[made]) < 0) goto done;
    }
    for (k = 0; k < n; k++) {  /* the references mf_dict_fill steals */
        Py_INCREF(keys[k]);
        Py_INCREF(values[k]);
    }
    /* a copy of a model must start untracked (mf_dict_fill tracks it without asking) */
    filled = PyDict_Copy(model);
    if (filled == NULL || PyObject_GC_IsTracked(filled)) goto done;
    Py_CLEAR(filled);
    filled = mf_dict_fill(model, keys, values, n);
    if (filled == NULL) {
        for (k = 0; k < n; k++) {
            Py_DECREF(keys[k]);
            Py_DECREF(values[k]);
        }
        goto done;
    }
    if (!mf_same_items(filled, expected) || !PyObject_GC_IsTracked(filled)) goto done;
    for (k = 0; k < n; k++)
        if (PyDict_GetItemWithError(model, keys[k]) != Py_None) goto done;
    if (PyDict_GET_SIZE(model) != n) goto done;
    /* Grown past its table and shrunk again, it still behaves as the expected dict. */
    for (k = 0; k < 6; k++) {
        extra = PyUnicode_FromFormat("mf_shape_extra_%zd", k);
        if (extra == NULL || PyDict_SetItem(filled, extra, Py_True) < 0 ||
            PyDict_SetItem(expected, extra, Py_True) < 0)
            goto done;
        Py_CLEAR(extra);
    }
    if (PyDict_DelItem(filled, keys[0]) < 0 || PyDict_DelItem(expected, keys[0]) < 0) goto done;
    ok = mf_same_items(filled, expected);
done:
    PyErr_Clear();
    for (k = 0; k < made; k++) {
        Py_DECREF(keys[k]);
        Py_DECREF(values[k]);
    }
    Py_XDECREF(extra);
    Py_XDECREF(model);
    Py_XDECREF(filled);
    Py_XDECREF(expected);
    return ok;
}

/*
 * Turn shapes on where the dict layout this module reads and writes in place is the one
 * found (cpython_compat.h) and filled models give exactly the dicts PyDict_SetItem builds,
 * for tables of both sizes a model can have.
 */
static int mf_shapes_check(void) {
    PyObject *probe;
    int ok = 0;
    mf_shapes_ok = 0;
    mf_dict_direct_enable(0);
    probe = Py_BuildValue("{s:i,s:i,s:i}", "a", 1, "b", 2, "c", 3);
    if (probe != NULL && PyDict_DelItemString(probe, "b") == 0 && mf_dict_direct_check(probe)) {
        mf_dict_direct_enable(1);
        ok = mf_shape_fill_works(MF_SHAPE_MIN_KEYS) && mf_shape_fill_works(3) &&
             mf_shape_fill_works(MF_SHAPE_MAX_KEYS);
    }
    Py_XDECREF(probe);
    PyErr_Clear();
    if (!ok) mf_dict_direct_enable(0);
    mf_shapes_ok = ok;
    return ok;
}

/* Shapes on (only where mf_shapes_check passed) or off; models are dropped either way. */
static int mf_shapes_enable(int on) {
    mf_shapes_clear();
    return on ? mf_shapes_check() : (mf_shapes_ok = 0);
}

#endif /* MCPFAST_TAPE_BUILD_H */
