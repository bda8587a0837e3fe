/*
 * Shapes: model dicts of small objects' key sequences, shared by the JSON reader
 * (tape_build.h) and the HTTP framer's header dicts.
 *
 * The first time a sequence of keys (by identity: the callers hand out interned keys from
 * their caches) is seen twice in a row at its slot, a model dict of those keys with None
 * values is kept; later objects of that shape are a copy of the model (PyDict_Copy: one
 * block copied, no hashing, no probing) whose values are then written in place.  That
 * write needs the dict's entry layout (cpython_compat.h), so it is used only where
 * mf_shapes_check() found at import that a filled copy is exactly the dict PyDict_SetItem
 * would have built (mf_shapes_ok, one flag per extension); elsewhere every object is
 * built with PyDict_SetItem.  Each caller keeps its own table of mf_shape_slot and picks
 * the slot of a hash itself.
 */
#ifndef MCPFAST_DICT_SHAPES_H
#define MCPFAST_DICT_SHAPES_H

#include <Python.h>
#include <stdint.h>

#include "mcpfast/compiler.h"
#include "mcpfast/cpython_compat.h"

/* Models of at most this many keys are checked by mf_shapes_check (and may be used). */
#define MF_SHAPE_CHECKED_KEYS 16

typedef struct {
    uint64_t model_hash;  /* hash of the model's keys */
    PyObject *model;      /* owned; its keys mapped to None; NULL: none */
    uint64_t seen_hash;   /* the last other shape that missed here (made the model when
                             it comes twice in a row) */
    uint64_t hits;        /* objects made from a model here since the table was cleared
                             (for tests: one add to a line just read; 32-byte slots, two
                             to a cache line, none straddling two) */
} mf_shape_slot;

/* Set by mf_shapes_check(): filled models may be used in this extension. */
static int mf_shapes_ok = 0;

MF_ALWAYS_INLINE uint64_t mf_shape_step(uint64_t h, PyObject *key) {
    return (h ^ (uint64_t)(uintptr_t)key) * 0x9E3779B97F4A7C15ULL;
}

/*
 * A copy of model with values[k] in place of the k-th value; steals keys[k] and values[k]
 * on success.  NULL without an exception when model does not hold exactly these n keys
 * (nothing stolen then), NULL with one when the copy failed (nothing stolen either).
 * Copying a compact dict's keys object as one block means no hashing, no probing, which
 * is most of what building the dict item by item costs: mf_dict_clone_filled where it
 * applies (cpython_compat.h), PyDict_Copy and a write of the values elsewhere.
 */
MF_ALWAYS_INLINE PyObject *mf_dict_fill(PyObject *model, PyObject **keys, PyObject **values, Py_ssize_t n) {
    mf_dict_entries e;
    Py_ssize_t k;
    int track = 0;
    PyObject *d;
    if (mf_dict_clone_ok) {
        /* NULL without an exception: not these keys (a copy would not have them either) */
        d = mf_dict_clone_filled(model, keys, values, n);
        if (d == NULL) return NULL;
    } else {
        d = PyDict_Copy(model);
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
        }
    }
    /* The collector must see a dict holding containers (the values built here that it
       tracks: dicts and lists), as PyDict_SetItem ensures.  Neither a clone nor a copy of
       a model is tracked yet (a model holds no containers, so neither PyDict_Copy nor the
       collector tracks it; mf_shape_fill_works checks it at import): tracked here exactly
       when it holds one, without asking the collector first. */
    for (k = 0; k < n; k++) track |= PyType_IS_GC(Py_TYPE(values[k]));
    if (track) PyObject_GC_Track(d);
    return d;
mismatch:
    Py_DECREF(d);
    return NULL;
}

/*
 * A model of the n distinct str keys keys[k] (None values); a new reference, or NULL with
 * an exception.  Made with PyDict_New and insertions, not _PyDict_NewPresized: CPython
 * 3.11..3.13 presize a general keys table ({hash, key, value} entries) for more than five
 * keys, which the clone refuses and PyDict_Copy copies at half as much again per entry;
 * insertions into PyDict_New's table keep a str-keys table, grown to the size presizing
 * gives (8 slots up to 5 keys, 16 up to 10, 32 up to 21).  The import-time check fills
 * models made here, so it meets every table the decoder's models have.
 */
static PyObject *mf_shape_model(PyObject **keys, Py_ssize_t n) {
    Py_ssize_t k;
    PyObject *model = PyDict_New();
    if (model == NULL) return NULL;
    for (k = 0; k < n; k++) {
        if (PyDict_SetItem(model, keys[k], Py_None) < 0) {
            Py_DECREF(model);
            return NULL;
        }
    }
    return model;
}

/* Keep a model of the n distinct keys of d's shape in slot; on failure simply none. */
static MF_NOINLINE void mf_shape_remember(mf_shape_slot *slot, uint64_t h, PyObject **keys,
                                          Py_ssize_t n) {
    PyObject *model = mf_shape_model(keys, n);
    if (model == NULL) {
        PyErr_Clear();  /* a model is an optimisation: without one, objects are still built */
        return;
    }
    Py_XSETREF(slot->model, model);
    slot->model_hash = h;
}

/*
 * The dict of the n members keys[k]: values[k] (hash h of the keys, by mf_shape_step;
 * slot: where the caller's table keeps that hash's model); steals them all.  A key given
 * twice keeps its last value, as PyDict_SetItem would (such a shape gets no model).
 */
MF_ALWAYS_INLINE PyObject *mf_dict_of_shape(mf_shape_slot *slot, PyObject **keys, PyObject **values,
                                            Py_ssize_t n, uint64_t h) {
    Py_ssize_t k;
    PyObject *d;
    if (slot->model_hash == h && slot->model != NULL) {
        d = mf_dict_fill(slot->model, keys, values, n);
        if (d != NULL) {
            slot->hits++;
            return d;
        }
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
    if (slot->model_hash == h && slot->model != NULL) {
        /* Its model refused these keys (another shape of the same hash): a model made
           again would refuse the next object, and each would be built twice. */
    } else if (slot->seen_hash == h) {
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

/* Forget every model of a table of count slots (for tests, and to release them). */
static void mf_shapes_clear(mf_shape_slot *table, Py_ssize_t count) {
    Py_ssize_t k;
    for (k = 0; k < count; k++) {
        Py_CLEAR(table[k].model);
        table[k].model_hash = table[k].seen_hash = table[k].hits = 0;
    }
}

/* How many objects a table of count slots made from its models since it was cleared. */
static uint64_t mf_shapes_hits(const mf_shape_slot *table, Py_ssize_t count) {
    uint64_t hits = 0;
    Py_ssize_t k;
    for (k = 0; k < count; k++) hits += table[k].hits;
    return hits;
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
    PyObject *keys[MF_SHAPE_CHECKED_KEYS], *values[MF_SHAPE_CHECKED_KEYS];
    PyObject *model = NULL, *filled = NULL, *expected = NULL, *extra = NULL;
    Py_ssize_t k, made = 0;
    int ok = 0;
    expected = PyDict_New();
    if (expected == NULL) goto done;
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
        if (PyDict_SetItem(expected, keys[made], values[made]) < 0) goto done;
    }
    model = mf_shape_model(keys, n);  /* as the decoder makes its models */
    if (model == NULL) goto done;
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
 * for every table size a model of 1..MF_SHAPE_CHECKED_KEYS keys can have.
 */
static int mf_shapes_check(void) {
    PyObject *probe;
    Py_ssize_t n;
    int ok = 0;
    mf_shapes_ok = 0;
    mf_dict_direct_enable(0);
    probe = Py_BuildValue("{s:i,s:i,s:i}", "a", 1, "b", 2, "c", 3);
    if (probe != NULL && PyDict_DelItemString(probe, "b") == 0 && mf_dict_direct_check(probe)) {
        mf_dict_direct_enable(1);
        mf_dict_clone_check();
        ok = 1;
        for (n = 1; n <= MF_SHAPE_CHECKED_KEYS && ok; n++) ok = mf_shape_fill_works(n);
    }
    Py_XDECREF(probe);
    PyErr_Clear();
    if (!ok) {
        mf_dict_direct_enable(0);
        mf_dict_clone_ok = 0;
    }
    mf_shapes_ok = ok;
    return ok;
}

#endif /* MCPFAST_DICT_SHAPES_H */
