/*
 * srcad_optim.h -- adam_step(p, g, m, v, ...): one leaf's Adam/AdamW update (srcad.optim) in one
 * pass, bit for bit the numpy statements of `Adam._update` it stands in for; adam_steps: a
 * list of leaves in one call. Included by srcad_driver.c alone.
 *
 * numpy runs that update as ~10 whole-array statements, each a pass over memory and most a
 * fresh temporary; for the tiny GPT of `python -m srcad demo` (36 leaves, ~100k parameters)
 * that was ~0.7 ms of a ~8.6 ms training step. Here every element goes through the same
 * operations in the same order, each rounded to the leaf's type as numpy rounds it (a Python
 * float meeting a float32 array is cast to float32 first: NEP 50), with no contraction into
 * FMA (the runtime is built with -ffp-contract=off), so the results are the same bits:
 *
 *     g = -g                          (maximize)
 *     p = p * decay                   (AdamW: decay = 1 - lr * weight_decay)
 *     g = g + weight_decay * p        (Adam with weight decay)
 *     m = m + w * (g - m)             (torch's lerp, |w| < 0.5; else m = g - (g - m) * (1 - w))
 *     v = v * beta2
 *     v = v + ((1 - beta2) * g) * g
 *     p = p + (-step_size * m) / (sqrt(v) / sqrt(bias_correction2) + eps)
 *
 * The scalars are computed in Python (double), as the numpy path computes them. Handled:
 * float32 or float64, all four arrays of one dtype and size, C-contiguous, aligned, native
 * byte order, p, m and v writeable, and no two of them sharing memory (numpy's statements
 * would read what an earlier one wrote over a shared operand, where this loop reads each input
 * once). Anything else is a TypeError and the caller runs the numpy statements.
 */
#ifndef SRCAD_OPTIM_H
#define SRCAD_OPTIM_H

enum { ADAM_MAXIMIZE = 1, ADAM_DECAY = 2, ADAM_WEIGHT_DECAY = 4, ADAM_LERP_HIGH = 8 };

#define ADAM_LOOP(T, SQRT)                                                                    \
    static SRCAD_RUNTIME_LOOP void adam_##T(T *restrict p, const T *restrict g,               \
                                            T *restrict m, T *restrict v, npy_intp n,         \
                                            int flags, const double *c)                       \
    {                                                                                         \
        const T decay = (T)c[0], wd = (T)c[1], w = (T)c[2], beta2 = (T)c[3];                  \
        const T one_minus_beta2 = (T)c[4], neg_step = (T)c[5], bc2_sqrt = (T)c[6];            \
        const T eps = (T)c[7];                                                                \
        for (npy_intp i = 0; i < n; i++) {                                                    \
            T gi = g[i];                                                                      \
            if (flags & ADAM_MAXIMIZE) gi = -gi;                                              \
            if (flags & ADAM_DECAY) p[i] = p[i] * decay;                                      \
            if (flags & ADAM_WEIGHT_DECAY) gi = gi + wd * p[i];                               \
            if (flags & ADAM_LERP_HIGH)                                                       \
                m[i] = gi - (gi - m[i]) * w;                                                  \
            else                                                                              \
                m[i] = m[i] + w * (gi - m[i]);                                                \
            T vi = v[i] * beta2;                                                              \
            vi = vi + (one_minus_beta2 * gi) * gi;                                            \
            v[i] = vi;                                                                        \
            const T denom = SQRT(vi) / bc2_sqrt + eps;                                        \
            p[i] = p[i] + (neg_step * m[i]) / denom;                                          \
        }                                                                                     \
    }
ADAM_LOOP(float, sqrtf)
ADAM_LOOP(double, sqrt)

/* do two C-contiguous arrays' bytes overlap? */
static int
optim_overlap(PyArrayObject *a, PyArrayObject *b)
{
    const char *a0 = PyArray_BYTES(a), *b0 = PyArray_BYTES(b);
    const char *a1 = a0 + PyArray_NBYTES(a), *b1 = b0 + PyArray_NBYTES(b);
    return a0 < b1 && b0 < a1;
}

/* One leaf: 1 done, 0 not a case it handles (nothing written), -1 an exception set. */
static int
adam_one(PyObject *const *arrays, PyObject *flags_obj, PyObject *coefs)
{
    if (!PyTuple_CheckExact(coefs) || PyTuple_GET_SIZE(coefs) != 8) {
        PyErr_SetString(PyExc_TypeError, "adam_step: coefficients (decay, weight_decay, w, "
                                         "beta2, 1-beta2, -step_size, bc2_sqrt, eps)");
        return -1;
    }
    long flags = PyLong_AsLong(flags_obj);
    if (flags == -1 && PyErr_Occurred()) return -1;
    double c[8];
    for (int k = 0; k < 8; k++) {
        c[k] = PyFloat_AsDouble(PyTuple_GET_ITEM(coefs, k));
        if (c[k] == -1.0 && PyErr_Occurred()) return -1;
    }
    PyArrayObject *a[4];
    for (int k = 0; k < 4; k++) {
        if (!PyArray_CheckExact(arrays[k])) return 0;
        a[k] = (PyArrayObject *)arrays[k];
    }
    int type = PyArray_TYPE(a[0]);
    int ok = type == NPY_FLOAT || type == NPY_DOUBLE;
    for (int k = 0; ok && k < 4; k++)
        ok = PyArray_TYPE(a[k]) == type && PyArray_SIZE(a[k]) == PyArray_SIZE(a[0]) &&
             (k == 1 ? PyArray_ISCARRAY_RO(a[k]) : PyArray_ISCARRAY(a[k])) &&
             PyArray_ISNOTSWAPPED(a[k]);
    for (int i = 0; ok && i < 4; i++)
        for (int j = i + 1; ok && j < 4; j++) ok = !optim_overlap(a[i], a[j]);
    if (!ok) return 0;
    npy_intp n = PyArray_SIZE(a[0]);
    if (type == NPY_FLOAT)
        adam_float((float *)PyArray_DATA(a[0]), (const float *)PyArray_DATA(a[1]),
                   (float *)PyArray_DATA(a[2]), (float *)PyArray_DATA(a[3]), n, (int)flags, c);
    else
        adam_double((double *)PyArray_DATA(a[0]), (const double *)PyArray_DATA(a[1]),
                    (double *)PyArray_DATA(a[2]), (double *)PyArray_DATA(a[3]), n, (int)flags,
                    c);
    return 1;
}

/* adam_step(p, g, m, v, flags, coefficients): one leaf; TypeError if not a case it handles */
static PyObject *
py_adam_step(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "adam_step(p, g, m, v, flags, coefficients)");
        return NULL;
    }
    int done = adam_one(args, args[4], args[5]);
    if (done < 0) return NULL;
    if (done == 0) {
        PyErr_SetString(PyExc_TypeError, "adam_step: not the case it handles");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* adam_steps([(p, g, m, v, coefficients), ...], flags) -> the positions it did not handle
 * (nothing written to those; the caller runs the numpy statements for them) */
static PyObject *
py_adam_steps(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "adam_steps([(p, g, m, v, coefficients), ...], flags)");
        return NULL;
    }
    PyObject *items = args[0], *left = PyList_New(0);
    if (left == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *it = PyList_GET_ITEM(items, i);
        if (!PyTuple_CheckExact(it) || PyTuple_GET_SIZE(it) != 5) {
            PyErr_SetString(PyExc_TypeError, "adam_steps: each item is (p, g, m, v, coefficients)");
            Py_DECREF(left);
            return NULL;
        }
        int done = adam_one(&PyTuple_GET_ITEM(it, 0), args[1], PyTuple_GET_ITEM(it, 4));
        if (done < 0) {
            Py_DECREF(left);
            return NULL;
        }
        if (done == 0) {
            PyObject *k = PyLong_FromSsize_t(i);
            if (k == NULL || PyList_Append(left, k) < 0) {
                Py_XDECREF(k);
                Py_DECREF(left);
                return NULL;
            }
            Py_DECREF(k);
        }
    }
    return left;
}

#define SRCAD_OPTIM_METHODS                                                                   \
    {"adam_step", (PyCFunction)(void (*)(void))py_adam_step, METH_FASTCALL,                  \
     "adam_step(p, g, m, v, flags, coefficients): one leaf's Adam update, in place"},         \
    {"adam_steps", (PyCFunction)(void (*)(void))py_adam_steps, METH_FASTCALL,                \
     "adam_steps([(p, g, m, v, coefficients), ...], flags) -> positions not handled"},

#endif /* SRCAD_OPTIM_H */
