/*
 * srcad_rowgrad.h -- extremum_grad_rows(g, out, x): the gradient of a max/min over the last
 * axis (srcad.runtime.extremum_grad) in one pass per row, bit for bit. Included by
 * srcad_driver.c alone.
 *
 * numpy spells it as four whole-array statements -- mask = x == out; count = mask.sum(-1);
 * share = g / count; np.where(mask, share, 0) -- and for the attention softmax of the tiny GPT
 * ((16, 4, 32, 32) float32) they took ~190 us of a 0.6 ms softmax gradient. Here each row
 * counts its extrema, divides once (the same division, in the same type), and writes the share
 * where x equals the extremum and +0.0 elsewhere: the same values, in one read of x and one
 * write of the result.
 *
 * The case: x a C-contiguous, aligned, native float32 or float64 array with a non-empty last
 * axis; g and out of x's dtype, C-contiguous, one value per row (x.size / x.shape[-1] values,
 * any shape). Anything else is a TypeError and the caller runs the numpy statements.
 *
 * extremum_grad_rows(g, out, x, acc) adds the result to `acc` (an array of x's shape, dtype
 * and layout) in the same pass: acc + extremum_grad(g, out, x), elementwise, acc the left
 * operand as numpy's `acc + ...` has it -- the softmax backward's `dx = dz + extremum_grad(
 * ...)` (srcad.runtime.extremum_grad_add, fused code) without the middle array and its pass.
 */
#ifndef SRCAD_ROWGRAD_H
#define SRCAD_ROWGRAD_H

#define EXTREMUM_ROWS(T)                                                                      \
    static SRCAD_RUNTIME_LOOP void extremum_rows_##T(const T *restrict g,                     \
                                                     const T *restrict out,                   \
                                                     const T *restrict x, T *restrict dx,     \
                                                     npy_intp rows, npy_intp L)               \
    {                                                                                         \
        for (npy_intp r = 0; r < rows; r++) {                                                 \
            const T *xr = x + r * L;                                                          \
            T *dr = dx + r * L;                                                               \
            const T e = out[r];                                                               \
            npy_intp count = 0;                                                               \
            for (npy_intp j = 0; j < L; j++) count += xr[j] == e;                             \
            const T share = g[r] / (T)count;                                                  \
            for (npy_intp j = 0; j < L; j++) dr[j] = xr[j] == e ? share : (T)0;               \
        }                                                                                     \
    }                                                                                         \
    static SRCAD_RUNTIME_LOOP void extremum_rows_add_##T(const T *restrict g,                 \
                                                         const T *restrict out,               \
                                                         const T *restrict x,                 \
                                                         const T *restrict acc,               \
                                                         T *restrict dx, npy_intp rows,       \
                                                         npy_intp L)                          \
    {                                                                                         \
        for (npy_intp r = 0; r < rows; r++) {                                                 \
            const T *xr = x + r * L, *ar = acc + r * L;                                       \
            T *dr = dx + r * L;                                                               \
            const T e = out[r];                                                               \
            npy_intp count = 0;                                                               \
            for (npy_intp j = 0; j < L; j++) count += xr[j] == e;                             \
            const T share = g[r] / (T)count;                                                  \
            for (npy_intp j = 0; j < L; j++) dr[j] = ar[j] + (xr[j] == e ? share : (T)0);     \
        }                                                                                     \
    }
EXTREMUM_ROWS(float)
EXTREMUM_ROWS(double)

typedef struct {
    const char *g, *out, *x, *acc; /* acc: NULL for extremum_grad_rows(g, out, x) */
    char *dx;
    npy_intp L;
    int dt; /* 0 float32, 1 float64 */
} extremum_plan;

/* rows [lo, hi) */
static int
extremum_work(const void *p, npy_intp lo, npy_intp hi)
{
    const extremum_plan *q = (const extremum_plan *)p;
    npy_intp L = q->L, n = hi - lo;
    if (q->dt == 0) {
        const float *g = (const float *)q->g + lo, *o = (const float *)q->out + lo,
                    *x = (const float *)q->x + lo * L;
        float *dx = (float *)q->dx + lo * L;
        if (q->acc != NULL)
            extremum_rows_add_float(g, o, x, (const float *)q->acc + lo * L, dx, n, L);
        else
            extremum_rows_float(g, o, x, dx, n, L);
    }
    else {
        const double *g = (const double *)q->g + lo, *o = (const double *)q->out + lo,
                     *x = (const double *)q->x + lo * L;
        double *dx = (double *)q->dx + lo * L;
        if (q->acc != NULL)
            extremum_rows_add_double(g, o, x, (const double *)q->acc + lo * L, dx, n, L);
        else
            extremum_rows_double(g, o, x, dx, n, L);
    }
    return 0;
}

static PyObject *
py_extremum_grad_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if ((nargs != 3 && nargs != 4) || !PyArray_CheckExact(args[0]) ||
        !PyArray_CheckExact(args[1]) || !PyArray_CheckExact(args[2]) ||
        (nargs == 4 && !PyArray_CheckExact(args[3]))) {
        PyErr_SetString(PyExc_TypeError,
                        "extremum_grad_rows(g, out, x[, acc]): three or four ndarrays");
        return NULL;
    }
    PyArrayObject *g = (PyArrayObject *)args[0], *out = (PyArrayObject *)args[1],
                  *x = (PyArrayObject *)args[2];
    int type = PyArray_TYPE(x), nd = PyArray_NDIM(x);
    npy_intp L = nd > 0 ? PyArray_DIM(x, nd - 1) : 0;
    npy_intp rows = L > 0 ? PyArray_SIZE(x) / L : 0;
    int ok = (type == NPY_FLOAT || type == NPY_DOUBLE) && L > 0 && PyArray_ISCARRAY_RO(x) &&
             PyArray_ISNOTSWAPPED(x);
    PyArrayObject *row[2] = {g, out};
    for (int k = 0; ok && k < 2; k++)
        ok = PyArray_TYPE(row[k]) == type && PyArray_SIZE(row[k]) == rows &&
             PyArray_ISCARRAY_RO(row[k]) && PyArray_ISNOTSWAPPED(row[k]);
    PyArrayObject *acc = nargs == 4 ? (PyArrayObject *)args[3] : NULL;
    if (ok && acc != NULL) {
        ok = PyArray_TYPE(acc) == type && PyArray_NDIM(acc) == nd &&
             PyArray_CompareLists(PyArray_DIMS(acc), PyArray_DIMS(x), nd) &&
             PyArray_ISCARRAY_RO(acc) && PyArray_ISNOTSWAPPED(acc);
    }
    if (!ok) {
        PyErr_SetString(PyExc_TypeError, "extremum_grad_rows: not the case it handles");
        return NULL;
    }
    PyArrayObject *dx = (PyArrayObject *)PyArray_SimpleNew(nd, PyArray_DIMS(x), type);
    if (dx == NULL) return NULL;
    extremum_plan q = {PyArray_BYTES(g), PyArray_BYTES(out), PyArray_BYTES(x),
                       acc != NULL ? PyArray_BYTES(acc) : NULL, PyArray_BYTES(dx), L,
                       type == NPY_FLOAT ? 0 : 1};
    team_shares(extremum_work, &q, rows, team_threads_for(rows * L));
    return (PyObject *)dx;
}

#define SRCAD_ROWGRAD_METHODS                                                                 \
    {"extremum_grad_rows", (PyCFunction)(void (*)(void))py_extremum_grad_rows, METH_FASTCALL, \
     "extremum_grad_rows(g, out, x[, acc]): extremum_grad over the last axis (added to acc), "   \
     "a new array"},

#endif /* SRCAD_ROWGRAD_H */
