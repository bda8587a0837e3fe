/*
 * Allocation and deallocation hooks for the extension types of decoded messages, which
 * are made and freed by the million.
 *
 * Free lists: a freed object's memory is kept for the next one of its type instead of
 * going back to pymalloc.  mf_freelist_install(type) points the type's tp_alloc and
 * tp_free at the list; everything else about the type is unchanged (its tp_new still asks
 * tp_alloc for zeroed memory, its tp_dealloc still ends in tp_free).  Only objects of
 * exactly an installed type are listed: subclasses keep their own tp_alloc / tp_free
 * (type_new sets them), and variable-size allocations go to PyType_GenericAlloc.  For
 * types outside the cyclic GC only (no GC header here).
 *
 * A release hook: mf_release_hook_install(type, release) makes the type's tp_dealloc call
 * release(o) first, then the tp_dealloc it had.  This is what a Cython __dealloc__ does,
 * without the saving and restoring of the current exception Cython wraps around one (a
 * release that cannot raise needs none).  Subclasses reach it through subtype_dealloc,
 * which calls the nearest base's tp_dealloc.
 */
#ifndef MCPFAST_MESSAGE_TYPES_H
#define MCPFAST_MESSAGE_TYPES_H

#include <Python.h>
#include <string.h>

#define MF_FREELIST_TYPES 4
#define MF_FREELIST_SIZE 32

typedef struct {
    PyTypeObject *type;
    int count;
    PyObject *free[MF_FREELIST_SIZE];
} mf_freelist;

static mf_freelist mf_freelists[MF_FREELIST_TYPES];

static inline mf_freelist *mf_freelist_of(PyTypeObject *type) {
    int k;
    for (k = 0; k < MF_FREELIST_TYPES; k++)
        if (mf_freelists[k].type == type) return &mf_freelists[k];
    return NULL;
}

/* tp_alloc: zeroed memory for a new object of type (a new reference), as PyType_GenericAlloc. */
static PyObject *mf_freelist_alloc(PyTypeObject *type, Py_ssize_t nitems) {
    mf_freelist *list = mf_freelist_of(type);
    if (nitems == 0 && list != NULL && list->count > 0) {
        PyObject *o = list->free[--list->count];
        memset(o, 0, (size_t)type->tp_basicsize);
        PyObject_Init(o, type);
        return o;
    }
    return PyType_GenericAlloc(type, nitems);
}

/* tp_free: keep the memory of an object of an installed type, else give it back. */
static void mf_freelist_free(void *p) {
    PyObject *o = (PyObject *)p;
    mf_freelist *list = mf_freelist_of(Py_TYPE(o));
    if (list != NULL && list->count < MF_FREELIST_SIZE) {
        list->free[list->count++] = o;
        return;
    }
    PyObject_Free(p);
}

/* Give type a free list; -1 with an exception when it cannot have one.  Not on a
   free-threaded build, where threads would share the lists without a lock: the type
   keeps its own allocator there. */
static int mf_freelist_install(PyTypeObject *type) {
    int k;
#ifdef Py_GIL_DISABLED
    (void)k;
    (void)type;
    return 0;
#endif
    if (PyType_IS_GC(type) || type->tp_itemsize != 0 || type->tp_free != PyObject_Free ||
        (type->tp_alloc != PyType_GenericAlloc && type->tp_alloc != mf_freelist_alloc)) {
        PyErr_Format(PyExc_TypeError, "%s cannot have a free list", type->tp_name);
        return -1;
    }
    for (k = 0; k < MF_FREELIST_TYPES; k++) {
        if (mf_freelists[k].type == NULL || mf_freelists[k].type == type) {
            mf_freelists[k].type = type;
            type->tp_alloc = mf_freelist_alloc;
            type->tp_free = mf_freelist_free;
            return 0;
        }
    }
    PyErr_SetString(PyExc_RuntimeError, "no free list left");
    return -1;
}

typedef void (*mf_release_func)(PyObject *o);

#define MF_RELEASE_TYPES 8

static struct {
    PyTypeObject *type;
    destructor dealloc;  /* the type's own tp_dealloc */
} mf_release_types[MF_RELEASE_TYPES];
static mf_release_func mf_release;

/* tp_dealloc of a hooked type (or of a subclass, through subtype_dealloc). */
static void mf_release_then_dealloc(PyObject *o) {
    PyTypeObject *type;
    int k;
    mf_release(o);
    for (type = Py_TYPE(o); type != NULL; type = type->tp_base)
        for (k = 0; k < MF_RELEASE_TYPES && mf_release_types[k].type != NULL; k++)
            if (mf_release_types[k].type == type) {
                mf_release_types[k].dealloc(o);
                return;
            }
    Py_FatalError("mcpfast: a release hook found no tp_dealloc to call");
}

/* Make type's tp_dealloc call release(o) first (the same release for every type). */
static int mf_release_hook_install(PyTypeObject *type, mf_release_func release) {
    int k;
    if (mf_release != NULL && mf_release != release) {
        PyErr_SetString(PyExc_RuntimeError, "one release function for all hooked types");
        return -1;
    }
    for (k = 0; k < MF_RELEASE_TYPES; k++) {
        if (mf_release_types[k].type == type) return 0;
        if (mf_release_types[k].type == NULL) {
            mf_release = release;
            mf_release_types[k].type = type;
            mf_release_types[k].dealloc = type->tp_dealloc;
            type->tp_dealloc = mf_release_then_dealloc;
            return 0;
        }
    }
    PyErr_SetString(PyExc_RuntimeError, "no release hook left");
    return -1;
}

#endif /* MCPFAST_MESSAGE_TYPES_H */
