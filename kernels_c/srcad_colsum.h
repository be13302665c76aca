/*
 * srcad_colsum.h -- lead_sum(x, k): numpy's `x.sum(axis=(0, ..., k-1))` of a C-contiguous
 * float32 or float64 array, bit for bit, its columns shared by srcad's threads (the team,
 * srcad_gemm.h). Included by srcad_driver.c alone, after srcad_gemm.h and give_fpe.
 *
 * What it is for (issue 25): the bias gradients of a layer applied to a batch (`db =
 * dh.sum(axis=(0, 1))`, the unbroadcast of `h + b`) and LayerNorm's gain and bias gradients
 * are sums over every axis but the last. numpy runs them on one thread; in the large
 * Transformer block's step they were 2.3-2.8 ms of ~90.
 *
 * Why the bits are numpy's: viewed as a matrix of R rows (the summed axes) and C columns (the
 * kept ones, C >= 2), a C-contiguous array's kept axes have the smaller strides, so numpy's
 * reduction iterates the rows outermost and adds each row into the result, column by column:
 * out[j] = ((0 + x[0, j]) + x[1, j]) + ... , starting from add's identity, +0.0 (so a column
 * of -0.0 sums to +0.0), in float32 for float32. Each column here is the same additions in
 * the same order, whichever thread runs it. With C == 1 numpy sums the one column pairwise
 * (its inner loop is then the summed axis): not this case. srcad.runtime.lead_sum also checks
 * this once per process against the numpy it runs with (a few probe arrays) and keeps numpy's
 * own sum where they differ.
 *
 * Floating-point errors (an overflow, inf - inf) are reported as numpy's sum reports them, by
 * np.errstate ("invalid value encountered in reduce").
 *
 * The case: x an exact, aligned, native-byte-order, C-contiguous float32 or float64 ndarray,
 * 1 <= k < x.ndim, the kept axes' product >= 2. Anything else is a TypeError and the caller
 * runs numpy's sum.
 */
#ifndef SRCAD_COLSUM_H
#define SRCAD_COLSUM_H

#define COLSUM_CHUNK 512 /* columns a unit of work, at most: its sums stay in L1 over the rows */

typedef struct {
    const char *x;
    char *out;
    npy_intp rows, cols, chunk; /* chunk: columns a unit of work */
    int dt;                     /* 0 float32, 1 float64 */
} colsum_plan;

#define COLSUM_LOOP(T)                                                                        \
    static void colsum_##T(const T *restrict x, T *restrict out, npy_intp rows, npy_intp cols, \
                           npy_intp j0, npy_intp j1)                                          \
    {                                                                                         \
        for (npy_intp j = j0; j < j1; j++) out[j] = (T)0;                                     \
        for (npy_intp r = 0; r < rows; r++) {                                                 \
            const T *xr = x + r * cols;                                                       \
            for (npy_intp j = j0; j < j1; j++) out[j] = out[j] + xr[j];                       \
        }                                                                                     \
    }
COLSUM_LOOP(float)
COLSUM_LOOP(double)

/* units [lo, hi): columns [lo * chunk, hi * chunk); the floating-point flags it raised */
static int
colsum_work(const void *p, npy_intp lo, npy_intp hi)
{
    const colsum_plan *pl = (const colsum_plan *)p;
    feclearexcept(FE_ALL_EXCEPT);
    npy_intp j0 = lo * pl->chunk, j1 = hi * pl->chunk;
    if (j1 > pl->cols) j1 = pl->cols;
    for (npy_intp j = j0; j < j1; j += pl->chunk) {
        npy_intp e = j + pl->chunk < j1 ? j + pl->chunk : j1;
        if (pl->dt == 0)
            colsum_float((const float *)pl->x, (float *)pl->out, pl->rows, pl->cols, j, e);
        else
            colsum_double((const double *)pl->x, (double *)pl->out, pl->rows, pl->cols, j, e);
    }
    return fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
}

static PyObject *
py_lead_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyArray_CheckExact(args[0]) || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "lead_sum(x: ndarray, k: int)");
        return NULL;
    }
    PyArrayObject *x = (PyArrayObject *)args[0];
    long k = PyLong_AsLong(args[1]);
    if (k == -1 && PyErr_Occurred()) return NULL;
    int type = PyArray_TYPE(x), nd = PyArray_NDIM(x);
    if ((type != NPY_FLOAT && type != NPY_DOUBLE) || k < 1 || k >= nd ||
        !PyArray_IS_C_CONTIGUOUS(x) || !PyArray_ISALIGNED(x) || !PyArray_ISNOTSWAPPED(x)) {
        PyErr_SetString(PyExc_TypeError, "lead_sum: not the case it handles");
        return NULL;
    }
    npy_intp rows = 1, cols = 1;
    for (int d = 0; d < nd; d++) {
        if (d < k) rows *= PyArray_DIM(x, d);
        else cols *= PyArray_DIM(x, d);
    }
    if (cols < 2) {
        PyErr_SetString(PyExc_TypeError, "lead_sum: one column (numpy sums it pairwise)");
        return NULL;
    }
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(nd - (int)k, PyArray_DIMS(x) + k,
                                                           type);
    if (out == NULL) return NULL;
    /* threads as a kernel takes them (the per-call choice inside a call), above the same size;
     * each thread a share of the columns, in units of at most COLSUM_CHUNK columns, at least
     * 16 (a cache line of float32) */
    int nt = team_threads_for(rows * cols);
    npy_intp chunk = (cols + nt - 1) / nt;
    chunk = chunk > COLSUM_CHUNK ? COLSUM_CHUNK : ((chunk + 15) / 16) * 16;
    colsum_plan pl = {PyArray_BYTES(x), PyArray_BYTES(out), rows, cols, chunk,
                      type == NPY_FLOAT ? 0 : 1};
    int flags = team_shares(colsum_work, &pl, (cols + chunk - 1) / chunk, nt);
    /* (numpy's reporting of an overflow or inf - inf: np.errstate, as numpy's sum has it) */
    if ((flags & (FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID)) &&
        give_fpe("reduce", npy_fpe(flags)) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

/* ---- c_copy(x): a C-contiguous copy of x, its rows shared by the team ------------------------
 * numpy's reshape of a view that no strides can express (the heads of an attention merged
 * back, `np.reshape(np.transpose(h, (0, 2, 1, 3)), (B, T, D))`, and the same in its backward)
 * copies on one thread: 0.2-0.4 ms for each of four such copies of the large Transformer
 * block's step. A copy is a copy: the same bytes whichever thread moves them. The case: an
 * exact, aligned ndarray of a dtype without references (not object), ndim >= 1; anything
 * else is a TypeError (the caller copies with numpy). */
typedef struct {
    const char *src;
    char *dst;
    int nd;
    npy_intp dims[SRCAD_MAXDIMS], strides[SRCAD_MAXDIMS];
    npy_intp item, len; /* bytes an element; elements a row (the last axis) */
} copy_plan;

/* rows [lo, hi) (a row: one index of every axis but the last) */
static int
copy_work(const void *p, npy_intp lo, npy_intp hi)
{
    const copy_plan *q = (const copy_plan *)p;
    npy_intp item = q->item, len = q->len, step = q->strides[q->nd - 1];
    for (npy_intp r = lo; r < hi; r++) {
        npy_intp off = 0, i = r;
        for (int d = q->nd - 2; d >= 0; d--) {
            off += (i % q->dims[d]) * q->strides[d];
            i /= q->dims[d];
        }
        const char *s = q->src + off;
        char *t = q->dst + r * len * item;
        if (step == item)
            memcpy(t, s, (size_t)(len * item));
        else if (item == 4)
            for (npy_intp j = 0; j < len; j++) memcpy(t + 4 * j, s + j * step, 4);
        else if (item == 8)
            for (npy_intp j = 0; j < len; j++) memcpy(t + 8 * j, s + j * step, 8);
        else
            for (npy_intp j = 0; j < len; j++) memcpy(t + item * j, s + j * step, (size_t)item);
    }
    return 0;
}

static PyObject *
py_c_copy(PyObject *self, PyObject *x_obj)
{
    (void)self;
    if (!PyArray_CheckExact(x_obj)) {
        PyErr_SetString(PyExc_TypeError, "c_copy(x: ndarray)");
        return NULL;
    }
    PyArrayObject *x = (PyArrayObject *)x_obj;
    int nd = PyArray_NDIM(x);
    if (nd < 1 || nd > SRCAD_MAXDIMS || PyDataType_REFCHK(PyArray_DESCR(x)) ||
        !PyArray_ISALIGNED(x)) {
        PyErr_SetString(PyExc_TypeError, "c_copy: not the case it handles");
        return NULL;
    }
    PyArray_Descr *descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    PyArrayObject *out = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, descr, nd, PyArray_DIMS(x), NULL, NULL, 0, NULL);
    if (out == NULL) return NULL;
    copy_plan q;
    q.src = PyArray_BYTES(x);
    q.dst = PyArray_BYTES(out);
    q.nd = nd;
    q.item = PyArray_ITEMSIZE(x);
    for (int d = 0; d < nd; d++) {
        q.dims[d] = PyArray_DIM(x, d);
        q.strides[d] = PyArray_STRIDE(x, d);
    }
    q.len = q.dims[nd - 1];
    npy_intp size = PyArray_SIZE(x), rows = q.len > 0 ? size / q.len : 0;
    if (size == 0) return (PyObject *)out;
    team_shares(copy_work, &q, rows, team_threads_for(size));
    return (PyObject *)out;
}

#define SRCAD_COLSUM_METHODS                                                                  \
    {"c_copy", py_c_copy, METH_O, "c_copy(x): a C-contiguous copy of x, on srcad's threads"},  \
    {"lead_sum", (PyCFunction)(void (*)(void))py_lead_sum, METH_FASTCALL,                   \
     "lead_sum(x, k): x.sum(axis=(0, ..., k-1)), numpy's bits, on srcad's threads"},

#endif /* SRCAD_COLSUM_H */
