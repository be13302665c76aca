/*
 * srcad_scatter.h -- scatter_add_rows(out, index, g): `np.add.at(out, index, g)` for the
 * case the gradient of an embedding lookup `table[tokens]` makes, bit for bit and without
 * ufunc.at's per-index dispatch. Included by srcad_driver.c alone; runtime.unindex calls it.
 *
 * The case: `out` a C-contiguous float32 or float64 array (M, ...), `index` an integer array
 * of any shape, `g` C-contiguous, of out's dtype, shaped index.shape + out.shape[1:]. Then
 * np.add.at adds, for each position i of the index in C order, the row g[i] to the row
 * out[index[i]], element by element -- a plain loop in that order, which is what this is, so
 * repeated indices accumulate in the same order and every sum has the same bits. Negative
 * indices count from the end; one out of range raises IndexError before anything is added.
 * Any other case is a TypeError, and the caller runs np.add.at itself.
 */
#ifndef SRCAD_SCATTER_H
#define SRCAD_SCATTER_H

#define SCATTER_ROWS(T)                                                                       \
    static void scatter_rows_##T(T *out, const npy_intp *idx, const T *g, npy_intp n,        \
                                 npy_intp width)                                             \
    {                                                                                         \
        for (npy_intp i = 0; i < n; i++) {                                                    \
            T *dst = out + idx[i] * width;                                                    \
            const T *src = g + i * width;                                                     \
            for (npy_intp j = 0; j < width; j++) dst[j] += src[j];                            \
        }                                                                                     \
    }
SCATTER_ROWS(float)
SCATTER_ROWS(double)

static PyObject *
py_scatter_add_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3 || !PyArray_CheckExact(args[0]) || !PyArray_CheckExact(args[1]) ||
        !PyArray_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "scatter_add_rows(out, index, g): three ndarrays");
        return NULL;
    }
    PyArrayObject *out = (PyArrayObject *)args[0], *ix = (PyArrayObject *)args[1],
                  *g = (PyArrayObject *)args[2];
    int type = PyArray_TYPE(out);
    int ok = (type == NPY_FLOAT || type == NPY_DOUBLE) && PyArray_TYPE(g) == type &&
             PyArray_NDIM(out) >= 1 && PyArray_ISCARRAY(out) && PyArray_ISCARRAY_RO(g) &&
             PyArray_ISNOTSWAPPED(out) && PyArray_ISNOTSWAPPED(g) &&
             PyArray_ISINTEGER(ix) && !PyArray_ISBOOL(ix) &&
             PyArray_NDIM(g) == PyArray_NDIM(ix) + PyArray_NDIM(out) - 1;
    for (int d = 0; ok && d < PyArray_NDIM(ix); d++)
        ok = PyArray_DIM(g, d) == PyArray_DIM(ix, d);
    for (int d = 1; ok && d < PyArray_NDIM(out); d++)
        ok = PyArray_DIM(g, PyArray_NDIM(ix) + d - 1) == PyArray_DIM(out, d);
    if (!ok) {
        PyErr_SetString(PyExc_TypeError, "scatter_add_rows: not the case it handles");
        return NULL;
    }
    /* the index as C-contiguous intp, normalised and checked before any row is touched */
    PyArrayObject *idx = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)ix, PyArray_DescrFromType(NPY_INTP), 0, 0,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_ENSURECOPY, NULL);
    if (idx == NULL) return NULL;
    npy_intp n = PyArray_SIZE(idx), rows = PyArray_DIM(out, 0);
    npy_intp width = rows > 0 ? PyArray_SIZE(out) / rows : 0;
    npy_intp *p = (npy_intp *)PyArray_DATA(idx);
    for (npy_intp i = 0; i < n; i++) {
        npy_intp k = p[i];
        if (k < -rows || k >= rows) {
            PyErr_Format(PyExc_IndexError,
                         "index %zd is out of bounds for axis 0 with size %zd", (Py_ssize_t)k,
                         (Py_ssize_t)rows);
            Py_DECREF(idx);
            return NULL;
        }
        p[i] = k < 0 ? k + rows : k;
    }
    if (n > 0 && width > 0) {
        if (type == NPY_FLOAT)
            scatter_rows_float((float *)PyArray_DATA(out), p, (const float *)PyArray_DATA(g),
                               n, width);
        else
            scatter_rows_double((double *)PyArray_DATA(out), p,
                                (const double *)PyArray_DATA(g), n, width);
    }
    Py_DECREF(idx);
    Py_RETURN_NONE;
}

#define SRCAD_SCATTER_METHODS                                                                 \
    {"scatter_add_rows", (PyCFunction)(void (*)(void))py_scatter_add_rows, METH_FASTCALL,   \
     "scatter_add_rows(out, index, g): np.add.at(out, index, g) for row scatters, in place"},

#endif /* SRCAD_SCATTER_H */
