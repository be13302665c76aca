/*
 * srcad_guards.h -- guards_hold(entries, missing): the check a transformed function runs before
 * every call (srcad/frontend/guards.py). Each entry is a tuple (kind, where, name, expected):
 *   kind 0  where.get(name, missing) is expected      (a module global, or its absence)
 *   kind 1  where.cell_contents is expected           (a closure cell; empty reads `missing`)
 *   kind 2  getattr(where, name, missing) is expected (a class or object attribute)
 *   kind 3  as 2, a bound method compared by its __func__
 *   kind 4  where (a list) holds exactly the objects of the tuple `expected`, in order
 *   kind 5  hasattr(where, name) is expected          (True or False: `hasattr(layer, "W")`)
 * True when every entry holds, False at the first that does not. The same as the Python
 * check guards.py compiles, at a few ns an entry instead of a few tens: a model's call pays
 * it every time. Raises TypeError for an entry it cannot read (the caller then uses Python). *
 * array_key(args) -- the key a transformed function's fast path looks its generated code up
 * by when every argument is an exact ndarray of a numeric dtype: bytes holding, per argument,
 * its ndim, shape, dtype (type number, byte order, item size) and whether it is C-contiguous
 * -- the facts of `_spec_key` (srcad/transformed.py), read from the array structs instead of
 * through ~3 Python attributes an argument (~1 us for six arrays). None for any other
 * argument (a scalar, a subclass, a structured or datetime dtype): the caller then builds the
 * Python key.
 */
#ifndef SRCAD_GUARDS_H
#define SRCAD_GUARDS_H

static PyObject *
py_guards_hold(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "guards_hold(entries: tuple, missing)");
        return NULL;
    }
    PyObject *entries = args[0], *missing = args[1];
    Py_ssize_t n = PyTuple_GET_SIZE(entries);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyTuple_GET_ITEM(entries, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 4) {
            PyErr_SetString(PyExc_TypeError, "guards_hold: an entry is not a 4-tuple");
            return NULL;
        }
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
        PyObject *where = PyTuple_GET_ITEM(e, 1), *name = PyTuple_GET_ITEM(e, 2);
        PyObject *expected = PyTuple_GET_ITEM(e, 3);
        if (kind == 0) {
            if (!PyDict_Check(where)) {
                PyErr_SetString(PyExc_TypeError, "guards_hold: a global's namespace is not a dict");
                return NULL;
            }
            PyObject *now = PyDict_GetItemWithError(where, name); /* borrowed */
            if (now == NULL) {
                if (PyErr_Occurred()) return NULL;
                now = missing;
            }
            if (now != expected) Py_RETURN_FALSE;
        } else if (kind == 1) {
            if (!PyCell_Check(where)) {
                PyErr_SetString(PyExc_TypeError, "guards_hold: not a cell");
                return NULL;
            }
            PyObject *now = PyCell_GET(where); /* borrowed; NULL when empty */
            if ((now == NULL ? missing : now) != expected) Py_RETURN_FALSE;
        } else if (kind == 2 || kind == 3) {
            PyObject *now = PyObject_GetAttr(where, name); /* new reference */
            if (now == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
                PyErr_Clear();
                if (missing != expected) Py_RETURN_FALSE;
                continue;
            }
            PyObject *key = (kind == 3 && PyMethod_Check(now)) ? PyMethod_GET_FUNCTION(now) : now;
            int same = key == expected;
            Py_DECREF(now);
            if (!same) Py_RETURN_FALSE;
        } else if (kind == 5) {
            PyObject *now = PyObject_GetAttr(where, name); /* new reference */
            if (now == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
                PyErr_Clear();
            }
            PyObject *has = now != NULL ? Py_True : Py_False;
            Py_XDECREF(now);
            if (has != expected) Py_RETURN_FALSE;
        } else if (kind == 4 && PyDict_Check(where) && PyTuple_Check(expected)) {
            /* a module's dict walked by its keys: these very keys, in this order */
            Py_ssize_t k = PyTuple_GET_SIZE(expected), pos = 0, j = 0;
            PyObject *dk, *dv;
            if (PyDict_GET_SIZE(where) != k) Py_RETURN_FALSE;
            while (PyDict_Next(where, &pos, &dk, &dv))
                if (dk != PyTuple_GET_ITEM(expected, j++)) Py_RETURN_FALSE;
        } else if (kind == 4) {
            if (!PyList_Check(where) || !PyTuple_Check(expected)) {
                PyErr_SetString(PyExc_TypeError, "guards_hold: items of a list");
                return NULL;
            }
            Py_ssize_t k = PyTuple_GET_SIZE(expected);
            if (PyList_GET_SIZE(where) != k) Py_RETURN_FALSE;
            for (Py_ssize_t j = 0; j < k; j++)
                if (PyList_GET_ITEM(where, j) != PyTuple_GET_ITEM(expected, j)) Py_RETURN_FALSE;
        } else {
            if (PyErr_Occurred()) return NULL;
            PyErr_SetString(PyExc_TypeError, "guards_hold: unknown entry kind");
            return NULL;
        }
    }
    Py_RETURN_TRUE;
}

static PyObject *
py_array_key(PyObject *self, PyObject *args)
{
    (void)self;
    if (!PyTuple_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "array_key(args: tuple)");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args), words = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        if (Py_TYPE(o) != &PyArray_Type) Py_RETURN_NONE;
        int t = PyArray_TYPE((PyArrayObject *)o);
        if (!(PyTypeNum_ISBOOL(t) || PyTypeNum_ISINTEGER(t) || PyTypeNum_ISFLOAT(t) ||
              PyTypeNum_ISCOMPLEX(t)))
            Py_RETURN_NONE;
        words += 5 + PyArray_NDIM((PyArrayObject *)o);
    }
    npy_intp stack[160], *buf = words <= 160 ? stack : PyMem_Malloc(words * sizeof(npy_intp));
    if (buf == NULL) return PyErr_NoMemory();
    npy_intp *w = buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyArrayObject *a = (PyArrayObject *)PyTuple_GET_ITEM(args, i);
        int nd = PyArray_NDIM(a);
        *w++ = nd;
        for (int k = 0; k < nd; k++) *w++ = PyArray_DIM(a, k);
        *w++ = PyArray_TYPE(a);
        *w++ = PyArray_ISNOTSWAPPED(a);
        *w++ = PyArray_ITEMSIZE(a);
        *w++ = PyArray_IS_C_CONTIGUOUS(a);
    }
    PyObject *key = PyBytes_FromStringAndSize((const char *)buf, words * sizeof(npy_intp));
    if (buf != stack) PyMem_Free(buf);
    return key;
}

#define SRCAD_GUARDS_METHODS                                                                   \
    {"guards_hold", (PyCFunction)(void (*)(void))py_guards_hold, METH_FASTCALL,               \
     "guards_hold(entries, missing) -> bool: every guard of a transformed function holds"},   \
    {"array_key", (PyCFunction)py_array_key, METH_O,                                           \
     "array_key(args) -> bytes | None: the fast path's key of a call with plain arrays"},

#endif /* SRCAD_GUARDS_H */
