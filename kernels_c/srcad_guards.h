/*
 * srcad_guards.h -- guards_hold(entries, missing): the check a transformed function runs before
 * every call (srcad/frontend/guards.py). Each entry is a tuple (kind, where, name, expected):
 *   kind 0  where.get(name, missing) is expected      (a module global, or its absence)
 *   kind 1  where.cell_contents is expected           (a closure cell; empty reads `missing`)
 *   kind 2  getattr(where, name, missing) is expected (a class or object attribute)
 *   kind 3  as 2, a bound method compared by its __func__
 *   kind 4  where (a list) holds exactly the objects of the tuple `expected`, in order
 * True when every entry holds, False at the first that does not. The same as the Python
 * check guards.py compiles, at a few ns an entry instead of a few tens: a model's call pays
 * it every time. Raises TypeError for an entry it cannot read (the caller then uses Python).
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

#define SRCAD_GUARDS_METHODS                                                                   \
    {"guards_hold", (PyCFunction)(void (*)(void))py_guards_hold, METH_FASTCALL,               \
     "guards_hold(entries, missing) -> bool: every guard of a transformed function holds"},

#endif /* SRCAD_GUARDS_H */
