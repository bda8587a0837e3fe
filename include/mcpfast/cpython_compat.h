/*
 * Fast paths into CPython internals, each behind a lower and an upper version guard
 * (MF_CPYTHON_INTERNALS: 3.10 up to the last version built and tested here, default
 * builds only -- neither free-threaded nor PyPy) with a public-API fallback that every
 * other build uses; the fallbacks' tests switch the fast paths off at run time
 * (mf_internals_enable) so that they run on the version CI runs too:
 *
 * - MF_UNICODE_READY: PyUnicode_READY before 3.12 (legacy strings), nothing after.
 * - the in-place dict walk (mf_dict_entries_of): the entry array of combined dicts on
 *   3.11+ default builds, enabled only when mf_dict_direct_check() found at import that it
 *   sees exactly what PyDict_Next sees; PyDict_Next everywhere else.
 * - mf_small_int: the value of a one-digit int without a call (the unstable compact-int
 *   API on 3.12+, ob_digit before); elsewhere none, and the caller's public path reads it.
 * - mf_dict_new_presized: _PyDict_NewPresized (a private function exported by CPython
 *   3.10..3.14) where it is allowed, PyDict_New() elsewhere.
 * - mf_type_dict: a type's dict, tp_dict before 3.12, PyType_GetDict from 3.12 (where
 *   tp_dict is internal).
 */
#ifndef MCPFAST_CPYTHON_COMPAT_H
#define MCPFAST_CPYTHON_COMPAT_H

#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

/*
 * The first CPython version the fast paths below were not built and tested on: a later
 * one gets the public-API fallbacks until they are checked there and this is raised.
 */
#define MF_CPYTHON_UNTESTED 0x030E0000
#if !defined(PYPY_VERSION) && !defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030A0000 && \
    PY_VERSION_HEX < MF_CPYTHON_UNTESTED
#define MF_CPYTHON_INTERNALS 1
#else
#define MF_CPYTHON_INTERNALS 0
#endif

/* The small-int read and the presized dict on (1) or switched off (0, for tests). */
static int mf_internals_ok = MF_CPYTHON_INTERNALS;

/* PEP 393 strings made by the pre-3.12 legacy API may need to be made ready first. */
#if PY_VERSION_HEX < 0x030C0000
#define MF_UNICODE_READY(o) PyUnicode_READY(o)
#else
#define MF_UNICODE_READY(o) 0
#endif

/*
 * Walking a dict's entries in place, without a PyDict_Next call per member.  CPython
 * 3.11 and later (default builds) keep a combined dict's entries in one array after
 * its hash index, {key, value} pairs when all keys are str, {hash, key, value} triples
 * otherwise (Include/internal/pycore_dict.h; the dict object itself is public).
 * Anything else -- other versions, free-threaded builds, split dicts -- uses
 * PyDict_Next, and so does everything unless the self-check at import found the
 * expected layout (mf_dict_direct_ok).
 */
#if MF_CPYTHON_INTERNALS && PY_VERSION_HEX >= 0x030B0000
#define MF_DICT_DIRECT 1
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size;
    uint8_t dk_log2_index_bytes;
    uint8_t dk_kind;
    uint32_t dk_version;
    Py_ssize_t dk_usable;
    Py_ssize_t dk_nentries;
    char dk_indices[1];
} mf_dict_keys;
#else
#define MF_DICT_DIRECT 0
#endif

static int mf_dict_direct_ok = 0;

/* Where a dict's entry array starts and how it is laid out. */
typedef struct {
    PyObject **slot;      /* key of the first entry; the value follows it */
    Py_ssize_t stride;    /* pointers from one entry to the next */
    Py_ssize_t count;     /* entries, including deleted ones (value NULL) */
} mf_dict_entries;

/* 0 when d must be walked with PyDict_Next instead. */
static inline int mf_dict_entries_of(PyObject *d, mf_dict_entries *e) {
#if MF_DICT_DIRECT
    PyDictObject *mp = (PyDictObject *)d;
    if (!mf_dict_direct_ok || mp->ma_values != NULL) return 0;
    mf_dict_keys *keys = (mf_dict_keys *)mp->ma_keys;
    PyObject **entries =
        (PyObject **)(keys->dk_indices + ((size_t)1 << keys->dk_log2_index_bytes));
    if (keys->dk_kind == 0) {  /* general keys: {hash, key, value} */
        e->slot = entries + 1;
        e->stride = 3;
    } else {                   /* str keys: {key, value} */
        e->slot = entries;
        e->stride = 2;
    }
    e->count = keys->dk_nentries;
    return 1;
#else
    (void)d;
    (void)e;
    return 0;
#endif
}

/* Whether the in-place walk of d sees exactly what PyDict_Next sees. */
static int mf_dict_direct_check(PyObject *d) {
    mf_dict_entries e;
    Py_ssize_t pos = 0, i;
    PyObject *key, *value;
    int saved = mf_dict_direct_ok, same = 1;
    mf_dict_direct_ok = 1;
    if (!mf_dict_entries_of(d, &e)) {
        same = 0;
    } else {
        for (i = 0; i < e.count && same; i++, e.slot += e.stride) {
            if (e.slot[1] == NULL) continue;
            same = PyDict_Next(d, &pos, &key, &value) && key == e.slot[0] &&
                   value == e.slot[1];
        }
        same = same && !PyDict_Next(d, &pos, &key, &value);
    }
    mf_dict_direct_ok = saved;
    return same;
}

static void mf_dict_direct_enable(int on) { mf_dict_direct_ok = on; }

/*
 * A new dict with the keys of model (a combined dict of exactly n str keys, none deleted,
 * whose k-th key is keys[k]) and values[k] as the k-th value; steals keys[k] and
 * values[k] on success.  NULL without an exception when model is not such a dict (nothing
 * stolen), NULL with one when memory is short (nothing stolen either).
 *
 * What PyDict_Copy does for a combined dict (its keys object copied as one block, then a
 * fresh dict pointed at it), without the reference traffic of a copy about to be
 * overwritten: the copied entries' values (the model's None) are replaced, not increfed
 * and decrefed, and the caller's references to the keys are handed over instead of taken
 * anew.  CPython 3.11 only (3.12 made the empty keys object immortal, whose reference this
 * swaps out), and only once mf_dict_clone_check() has found at import the layout it needs
 * (mf_dict_clone_ok; the caller copies with PyDict_Copy otherwise).  The dict comes
 * untracked by the collector.
 */
static int mf_dict_clone_ok = 0;

/* Bounded on both sides by the layout it writes: the 3.11 keys object (3.10 has no
   dk_kind, 3.12 an immortal empty keys object); PyDict_Copy (dict_shapes.h) elsewhere. */
#if MF_DICT_DIRECT && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define MF_DICT_CLONE 1
#define MF_DICT_KEYS_UNICODE 1

/*
 * Whether new dicts come pointed at one shared, counted empty keys object (whose count a
 * clone gives back) and the in-place dict layout was found (mf_dict_direct_ok): sets
 * mf_dict_clone_ok.
 */
static int mf_dict_clone_check(void) {
    PyObject *a = PyDict_New(), *b = PyDict_New();
    mf_dict_keys *keys;
    mf_dict_clone_ok = 0;
    if (a != NULL && b != NULL && mf_dict_direct_ok) {
        keys = (mf_dict_keys *)((PyDictObject *)a)->ma_keys;
        mf_dict_clone_ok = (PyDictKeysObject *)keys == ((PyDictObject *)b)->ma_keys &&
                           keys->dk_nentries == 0 && keys->dk_refcnt >= 3 &&
                           ((PyDictObject *)a)->ma_values == NULL;
    }
    Py_XDECREF(a);
    Py_XDECREF(b);
    PyErr_Clear();
    return mf_dict_clone_ok;
}

static inline PyObject *mf_dict_clone_filled(PyObject *model, PyObject **keys, PyObject **values,
                                             Py_ssize_t n) {
    PyDictObject *mp = (PyDictObject *)model;
    mf_dict_keys *mk = (mf_dict_keys *)mp->ma_keys, *nk;
    size_t index_bytes, size;
    PyObject **src, **dst, *d;
    Py_ssize_t k;
    if (mp->ma_values != NULL || mk->dk_kind != MF_DICT_KEYS_UNICODE ||
        mk->dk_nentries != n || mp->ma_used != n || mk->dk_refcnt != 1)
        return NULL;
    index_bytes = (size_t)1 << mk->dk_log2_index_bytes;
    src = (PyObject **)(mk->dk_indices + index_bytes);
    for (k = 0; k < n; k++)
        if (src[2 * k] != keys[k]) return NULL;
    /* The size of a keys object (_PyDict_KeysSize): header, index, and its usable
       entries, two thirds of its slots ({key, value} pairs for str keys). */
    size = offsetof(mf_dict_keys, dk_indices) + index_bytes +
           ((((size_t)1 << mk->dk_log2_size) << 1) / 3) * 2 * sizeof(PyObject *);
    d = PyDict_New();
    if (d == NULL) return NULL;
    nk = (mf_dict_keys *)PyObject_Malloc(size);
    if (nk == NULL) {
        Py_DECREF(d);
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(nk, mk, size);
    nk->dk_refcnt = 1;
    dst = (PyObject **)(nk->dk_indices + index_bytes);
    for (k = 0; k < n; k++) {
        dst[2 * k] = keys[k];        /* the same object as the model's key: our reference */
        dst[2 * k + 1] = values[k];  /* in place of the model's None, not counted here */
    }
    /* PyDict_New pointed the dict at the shared empty keys object and counted it
       (mf_dict_clone_check): that reference is given back. */
    ((mf_dict_keys *)((PyDictObject *)d)->ma_keys)->dk_refcnt--;
    ((PyDictObject *)d)->ma_keys = (PyDictKeysObject *)nk;
    ((PyDictObject *)d)->ma_used = n;
    return d;
}
#else
#define MF_DICT_CLONE 0
static int mf_dict_clone_check(void) { return 0; }
static inline PyObject *mf_dict_clone_filled(PyObject *model, PyObject **keys, PyObject **values,
                                             Py_ssize_t n) {
    (void)model; (void)keys; (void)values; (void)n;
    return NULL;
}
#endif

/* The value of an int that fits in one internal digit, read without a call; 0 for any
   other int, and wherever the internals are off (the caller reads it through the public
   API then). */
static inline int mf_small_int(PyObject *o, long long *value) {
#if MF_CPYTHON_INTERNALS && PY_VERSION_HEX >= 0x030C0000
    if (mf_internals_ok && PyUnstable_Long_IsCompact((PyLongObject *)o)) {
        *value = (long long)PyUnstable_Long_CompactValue((PyLongObject *)o);
        return 1;
    }
#elif MF_CPYTHON_INTERNALS
    Py_ssize_t size = Py_SIZE(o);
    if (!mf_internals_ok) return 0;
    if (size == 0) { *value = 0; return 1; }
    if (size == 1) { *value = (long long)((PyLongObject *)o)->ob_digit[0]; return 1; }
    if (size == -1) { *value = -(long long)((PyLongObject *)o)->ob_digit[0]; return 1; }
#else
    (void)o;
    (void)value;
#endif
    return 0;
}

/* A dict with room for n items without resizing, where CPython offers it. */
static inline PyObject *mf_dict_new_presized(Py_ssize_t n) {
#if MF_CPYTHON_INTERNALS
    if (mf_internals_ok) return _PyDict_NewPresized(n);
#endif
    (void)n;
    return PyDict_New();
}

/* This module's small-int read and presized dicts on, where compiled in, or off (tests
   run the fallbacks so); the dict walk has its own switch, mf_dict_direct_enable. */
static inline void mf_internals_enable(int on) { mf_internals_ok = on && MF_CPYTHON_INTERNALS; }

/* A type's dict (a new reference): the field before 3.12, where it is public; 3.12 made
   it internal (NULL for static builtin types) and added PyType_GetDict. */
static inline PyObject *mf_type_dict(PyTypeObject *tp) {
#if PY_VERSION_HEX >= 0x030C0000
    return PyType_GetDict(tp);
#else
    Py_XINCREF(tp->tp_dict);
    return tp->tp_dict;
#endif
}

/*
 * fn(arg) with the cyclic collector paused (and restored as it was, also when fn fails),
 * so that no finalizer -- arbitrary Python code -- runs while fn works; fn returns a new
 * reference, or NULL with an exception set.  PyGC_Disable/PyGC_Enable: CPython 3.10+.
 */
static inline PyObject *mf_call_without_gc(PyObject *(*fn)(void *), void *arg) {
    int was_enabled = PyGC_Disable();
    PyObject *result = fn(arg);
    if (was_enabled) PyGC_Enable();
    return result;
}

/*
 * Make type.name a read-only member descriptor (T_OBJECT_EX) of the object field at
 * offset, in place of the getset property Cython makes for a `cdef readonly object`
 * attribute.  The interpreter specializes reading such a member (3.11+: LOAD_ATTR_SLOT, a
 * load from the object at a cached offset) but not a getset, which costs a type lookup, a
 * call and a wrapper on every read.  The field must never be NULL (Cython sets object
 * fields to None on allocation).  The PyMemberDef lives as long as the process.
 */
static int mf_member_descriptor_flags(PyTypeObject *tp, const char *name, Py_ssize_t offset,
                                      int flags) {
    PyMemberDef *def = (PyMemberDef *)PyMem_RawCalloc(1, sizeof(PyMemberDef));
    if (def == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    def->name = name;
    def->type = T_OBJECT_EX;
    def->offset = offset;
    def->flags = flags;
    PyObject *descr = PyDescr_NewMember(tp, def);
    if (descr == NULL) {
        PyMem_RawFree(def);
        return -1;
    }
    PyObject *dict = mf_type_dict(tp);
    int status = dict == NULL ? -1 : PyDict_SetItemString(dict, name, descr);
    Py_XDECREF(dict);
    Py_DECREF(descr);
    PyType_Modified(tp);
    return status;
}

static inline int mf_member_descriptor(PyTypeObject *tp, const char *name, Py_ssize_t offset) {
    return mf_member_descriptor_flags(tp, name, offset, READONLY);
}

/*
 * The same, writable (the interpreter specializes the store too: STORE_ATTR_SLOT).  A
 * field Python code may also delete: T_OBJECT_EX then reads as AttributeError, never NULL
 * in C (the compiled code using such a field must not meet NULL: it is never deleted).
 */
static inline int mf_writable_member_descriptor(PyTypeObject *tp, const char *name,
                                                Py_ssize_t offset) {
    return mf_member_descriptor_flags(tp, name, offset, 0);
}

/*
 * MF_EXPOSE(tp, S, field): tp.field becomes a writable member descriptor of the object
 * field ``field`` of struct S (the instance struct Cython generates for a cdef class);
 * nonzero on error. For the cdef fields Python code reads and writes often.
 */
#define MF_EXPOSE(tp, S, field) (mf_writable_member_descriptor( \
    (PyTypeObject *)(tp), #field, (Py_ssize_t)offsetof(struct S, field)) < 0)

/*
 * obj.name = value through descr, the member descriptor type(obj).name (a __slots__
 * entry): the store without looking the name up in the type's dictionary, for a caller
 * that fetched the descriptor once. 0, or -1 with an exception set.
 */
static inline int mf_member_set(PyObject *descr, PyObject *obj, PyObject *value) {
    return Py_TYPE(descr)->tp_descr_set(descr, obj, value);
}

/*
 * obj.name through descr, the member descriptor of a __slots__ entry fetched once: the
 * read without the type's attribute lookup (generic attribute access consults the
 * interpreter's method cache, a cold cache line per read on a request's path). A new
 * reference, or NULL with an exception set (AttributeError for an empty slot, TypeError
 * when obj is no instance of the slot's class).
 */
static inline PyObject *mf_member_get(PyObject *descr, PyObject *obj) {
    return Py_TYPE(descr)->tp_descr_get(descr, obj, (PyObject *)Py_TYPE(obj));
}

/* Whether o is a member descriptor (a __slots__ entry or a PyMemberDef field). */
static inline int mf_is_member_descriptor(PyObject *o) {
    return Py_TYPE(o) == &PyMemberDescr_Type;
}

#endif /* MCPFAST_CPYTHON_COMPAT_H */
