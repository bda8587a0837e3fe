/*
 * Free lists for the objects of a few extension types that are made and freed by the
 * million (decoded messages): a freed object's memory is kept for the next one of its
 * type instead of going back to pymalloc.  mf_freelist_install(type) points the type's
 * tp_alloc and tp_free at the list; everything else about the type is unchanged (its
 * tp_new still asks tp_alloc for zeroed memory, its tp_dealloc still ends in tp_free).
 * Only objects of exactly an installed type are listed: subclasses keep their own
 * tp_alloc / tp_free (type_new sets them), and variable-size allocations go to
 * PyType_GenericAlloc.  For types outside the cyclic GC only (no GC header here).
 */
#ifndef MCPFAST_FREELIST_H
#define MCPFAST_FREELIST_H

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

/* Give type a free list; -1 with an exception when it cannot have one. */
static int mf_freelist_install(PyTypeObject *type) {
    int k;
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

#endif /* MCPFAST_FREELIST_H */
