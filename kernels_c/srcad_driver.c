/*
 * srcad_driver.c -- the C runtime of srcad's fused kernels (the extension `srcad._kernels`).
 *
 * setuptools builds it at `pip install` (setup.py: optional, so that a machine without a
 * compiler still installs); srcad.build compiles the same file into its kernel cache when the
 * installed copy is missing. Generated kernel modules get its entry points through the
 * capsule `srcad._kernels.api` (see srcad_kernels.h for the contract).
 *
 * What one call of a kernel does (`run`):
 *   1. check the arguments against what the kernel was built for: exact ndarrays of the
 *      right dtype (native byte order, aligned), 0-d arrays or numpy scalars, Python numbers.
 *      Anything else -- another dtype, a subclass, a list, shapes that do not broadcast --
 *      goes to the kernel's fallback, the same statements as plain numpy code, so a
 *      mismatch costs speed, never a wrong answer or a crash;
 *   2. broadcast the arguments into the kernel's shape (numpy's rules) and check that every
 *      fused statement has that shape;
 *   3. allocate each new output through numpy, in the memory order numpy would give that
 *      statement's result (its "K" order rule, `best_order` below: a transposed input gives
 *      a transposed result, and a later reduction then sums in the same order), or take
 *      the array an in-place statement (`dx += ...`) writes into; another argument that
 *      shares memory with such an array sends the call to the fallback (numpy's statement
 *      order decides what it reads). An out= array is taken as given; it may be exactly
 *      an argument (same memory, same strides: the memory plan's reuse of a dying
 *      operand), which the kernel then overwrites through scratch block by block, as it
 *      does an in-place target; any other overlap is a ValueError;
 *   4. walk the iteration space in the first output's memory order, after dropping length-1
 *      axes and merging axes that are contiguous for every operand: one row of a contiguous
 *      chain is one call of the block function (the fast path); a stride-0 operand is
 *      filled, a strided one gathered, into per-thread scratch, block by block;
 *   5. above a size threshold, split the rows (or one long row) between srcad's threads --
 *      where that has paid off for this kernel before (see `run`: on a busy machine a
 *      team of two waits a whole time slice for a preempted thread);
 *   6. report floating-point exceptions raised by the chain the way numpy does for a ufunc
 *      (np.errstate decides: ignore, warn, raise), under the kernel's name.
 *
 * A row kernel (a chain through a last-axis sum or mean: k->rowwise) takes steps 2-4 in
 * `run_rows` instead: its arguments must have their planned shapes and be in C order, its
 * block function is called once per row.
 *
 * `row_reduce(a, 'sum' | 'mean')` runs the header's row reductions (numpy's pairwise sum,
 * bit for bit) over the last axis of a C-contiguous float array, for the tests.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_23_API_VERSION
/* numpy 2.0's API (PyUFunc_GiveFloatingpointErrors); with numpy 1.x headers the runtime
 * reports floating-point errors as a plain RuntimeWarning instead */
#include <numpy/_numpyconfig.h> /* NPY_ABI_VERSION only: numpyconfig.h reads the target */
#if NPY_ABI_VERSION >= 0x02000000
#define NPY_TARGET_VERSION 0x00000012
#endif
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <unistd.h>

#include "srcad_kernels.h"
#include "srcad_pool.h"
#include "srcad_scatter.h"
#include "srcad_optim.h"
#include "srcad_guards.h"

#define MAXOPS (2 * SRCAD_MAXARGS)
#define MAXD SRCAD_MAXDIMS

/* -- settings and counters -------------------------------------------------------------- */

static int num_threads = 1;
static npy_intp parallel_min = 65536; /* elements; below this a kernel runs on one thread */
static int strict = 0;                /* raise instead of falling back (tests) */
static int adaptive = 1;              /* use threads only where they have paid off */
static unsigned long long n_calls = 0, n_fallbacks = 0;
/* row kernel calls that ran their rows a chunk at a time (k->block_rows) */
static unsigned long long n_row_chunked = 0;
static char last_fallback[512] = "";

static int
default_threads(void)
{
    const char *env = getenv("SRCAD_NUM_THREADS");
    if (env != NULL && *env) {
        int n = atoi(env);
        return n >= 1 ? n : 1;
    }
    /* the CPUs this process may run on (its affinity mask), as OpenMP's omp_get_num_procs */
#ifdef __linux__
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) >= 1)
        return CPU_COUNT(&mask);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

#include "srcad_threads.h" /* (after num_threads: it chooses them per call) */
#include "srcad_gemm.h"    /* (after srcad_threads.h: it shares the threads it chose) */

#include <time.h>

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* -- numpy type names, for messages ---------------------------------------------------- */

static const char *
type_name(int type)
{
    PyArray_Descr *d = PyArray_DescrFromType(type);
    const char *name = "?";
    if (d != NULL) {
        name = d->typeobj->tp_name;
        Py_DECREF(d);
    }
    else {
        PyErr_Clear();
    }
    if (strncmp(name, "numpy.", 6) == 0) {
        name += 6;
    }
    return name;
}

/* -- the fallback ------------------------------------------------------------------------ */

static PyObject *
fall_back(srcad_kernel *k, PyObject *const *args, Py_ssize_t nargs, const char *why,
          PyObject *const *given)
{
    n_fallbacks++;
    snprintf(last_fallback, sizeof(last_fallback), "%s (%s): %s", k->name, k->where, why);
    if (strict || k->fallback == NULL) {
        PyErr_Format(PyExc_TypeError, "srcad kernel %s (%s): %s", k->name, k->where, why);
        return NULL;
    }
    PyObject *res = PyObject_Vectorcall(k->fallback, args, nargs, NULL);
    if (res == NULL || given == NULL) {
        return res;
    }
    /* out=: the fallback's results copied into the given arrays (an output without one,
     * None in the tuple, is the fallback's own result) */
    for (int o = 0; o < k->nout; o++) {
        PyObject *r = k->nout == 1 ? res : PyTuple_GET_ITEM(res, o);
        if (given[o] != NULL && given[o] != r &&
            PyArray_CopyInto((PyArrayObject *)given[o], (PyArrayObject *)r) < 0) {
            Py_DECREF(res);
            return NULL;
        }
    }
    if (k->nout == 1) {
        PyObject *one = Py_NewRef(given[0] != NULL ? given[0] : res);
        Py_DECREF(res);
        return one;
    }
    PyObject *t = PyTuple_New(k->nout);
    for (int o = 0; t != NULL && o < k->nout; o++) {
        PyTuple_SET_ITEM(t, o, Py_NewRef(given[o] != NULL ? given[o]
                                                          : PyTuple_GET_ITEM(res, o)));
    }
    Py_DECREF(res);
    return t;
}

/* -- numpy's memory-order rule ------------------------------------------------------------
 * The order numpy's iterator gives a new result (order="K"): the axes sorted by the
 * operands' strides, smallest first, by a stable insertion sort that starts from C order
 * and compares two axes only on operands where both strides are non-zero; when operands
 * disagree about a pair, C order wins. Same idea as numpy's npyiter_find_best_axis_ordering
 * (numpy/_core/src/multiarray/nditer_constr.c); written here over plain stride tables.
 * order[0] is the innermost axis. */
static void
best_order(int nd, int nops, npy_intp (*const *strides), int *order)
{
    for (int i = 0; i < nd; i++) {
        order[i] = nd - 1 - i;
    }
    for (int i0 = 1; i0 < nd; i0++) {
        int ax0 = order[i0], ipos = i0;
        for (int i1 = i0 - 1; i1 >= 0; i1--) {
            int ax1 = order[i1], decided = 0, swap = 0;
            for (int op = 0; op < nops; op++) {
                npy_intp s0 = strides[op][ax0], s1 = strides[op][ax1];
                if (s0 != 0 && s1 != 0) {
                    if ((s1 < 0 ? -s1 : s1) <= (s0 < 0 ? -s0 : s0)) {
                        swap = 0; /* this operand wants C order: it wins */
                    }
                    else if (!decided) {
                        swap = 1;
                    }
                    decided = 1;
                }
            }
            if (decided) {
                if (swap) {
                    ipos = i1;
                }
                else {
                    break;
                }
            }
        }
        if (ipos != i0) {
            for (int i = i0; i > ipos; i--) {
                order[i] = order[i - 1];
            }
            order[ipos] = ax0;
        }
    }
}

/* strides (in elements of 1 byte) of a new array of `shape` laid out in `order`; length-1
 * axes get 0, as numpy's iterator treats them */
static void
strides_for_order(int nd, const npy_intp *shape, const int *order, npy_intp itemsize,
                  npy_intp *strides)
{
    npy_intp s = itemsize;
    for (int i = 0; i < nd; i++) {
        int ax = order[i];
        strides[ax] = s;
        s *= shape[ax];
    }
}

/* a table of strides is in C order if its non-zero strides never grow from axis to axis */
static int
is_c_compatible(int nd, const npy_intp *s)
{
    npy_intp prev = -1;
    for (int d = 0; d < nd; d++) {
        npy_intp a = s[d] < 0 ? -s[d] : s[d];
        if (a == 0) {
            continue;
        }
        if (prev >= 0 && a > prev) {
            return 0;
        }
        prev = a;
    }
    return 1;
}

/* -- the iteration ------------------------------------------------------------------------ */

enum { CLS_FIXED = 0, CLS_DIRECT = 1, CLS_ZERO = 2, CLS_STRIDED = 3 };

typedef struct {
    srcad_kernel *k;
    int nop;   /* arguments then outputs */
    int ndim;  /* after dropping length-1 axes and merging */
    npy_intp shape[MAXD];
    npy_intp strides[MAXOPS][MAXD];
    char *data[MAXOPS];
    int itemsize[MAXOPS];
    int cls[MAXOPS]; /* how the operand is read or written along the innermost axis */
    int full[MAXOPS]; /* the operand is contiguous over the whole iteration (base + i) */
    int inplace[MAXOPS]; /* an output written over an argument's elements (an inout target,
                          * or an out= array that is exactly an argument): the block writes
                          * scratch, copied out once the block has read the argument */
    npy_intp rows, len, blk, nblk;
    npy_intp rpb; /* rows per unit: short rows (a broadcast operand stops the axes from
                   * merging) are taken several at a time, so that a block call and a numpy
                   * loop call cover up to SRCAD_BLOCK elements, not one row */
} plan_t;

static _Thread_local char *tl_buf = NULL;
static _Thread_local size_t tl_size = 0;

static char *
scratch(size_t size)
{
    if (size > tl_size) {
        free(tl_buf);
        size_t want = size < 65536 ? 65536 : size;
        tl_buf = aligned_alloc(64, (want + 63) & ~(size_t)63);
        tl_size = tl_buf != NULL ? want : 0;
    }
    return tl_buf;
}

static void
fill(char *dst, const char *src, npy_intp n, int isz)
{
    switch (isz) {
        case 1: memset(dst, *src, (size_t)n); break;
        case 2: { uint16_t v; memcpy(&v, src, 2); for (npy_intp i = 0; i < n; i++) ((uint16_t *)dst)[i] = v; } break;
        case 4: { uint32_t v; memcpy(&v, src, 4); for (npy_intp i = 0; i < n; i++) ((uint32_t *)dst)[i] = v; } break;
        case 8: { uint64_t v; memcpy(&v, src, 8); for (npy_intp i = 0; i < n; i++) ((uint64_t *)dst)[i] = v; } break;
        default: for (npy_intp i = 0; i < n; i++) memcpy(dst + i * isz, src, isz);
    }
}

static void
gather(char *dst, const char *src, npy_intp stride, npy_intp n, int isz)
{
    if (stride == isz) {
        memcpy(dst, src, (size_t)(n * isz));
        return;
    }
    switch (isz) {
        case 1: for (npy_intp i = 0; i < n; i++) dst[i] = src[i * stride]; break;
        case 2: for (npy_intp i = 0; i < n; i++) memcpy(dst + 2 * i, src + i * stride, 2); break;
        case 4: for (npy_intp i = 0; i < n; i++) memcpy(dst + 4 * i, src + i * stride, 4); break;
        case 8: for (npy_intp i = 0; i < n; i++) memcpy(dst + 8 * i, src + i * stride, 8); break;
        default: for (npy_intp i = 0; i < n; i++) memcpy(dst + isz * i, src + i * stride, isz);
    }
}

static void
scatter(char *dst, npy_intp stride, const char *src, npy_intp n, int isz)
{
    if (stride == isz) {
        memcpy(dst, src, (size_t)(n * isz));
        return;
    }
    switch (isz) {
        case 1: for (npy_intp i = 0; i < n; i++) dst[i * stride] = src[i]; break;
        case 2: for (npy_intp i = 0; i < n; i++) memcpy(dst + i * stride, src + 2 * i, 2); break;
        case 4: for (npy_intp i = 0; i < n; i++) memcpy(dst + i * stride, src + 4 * i, 4); break;
        case 8: for (npy_intp i = 0; i < n; i++) memcpy(dst + i * stride, src + 8 * i, 8); break;
        default: for (npy_intp i = 0; i < n; i++) memcpy(dst + i * stride, src + isz * i, isz);
    }
}

/* units of several short rows: operands contiguous over the iteration are read and written
 * in place, the others filled, gathered and scattered row by row */
static void
work_rows(const plan_t *pl, npy_intp u0, npy_intp u1, char *buf, size_t slot, char **p,
          char **tmp, char **raw, intptr_t *step)
{
    srcad_kernel *k = pl->k;
    const int nop = pl->nop, nin = k->nin, nd = pl->ndim;
    const npy_intp L = pl->len;
    npy_intp idx[MAXD];
    /* an argument that is one row for every row (a bias, a gain: every outer stride 0) is
     * gathered into its scratch rows for the first unit only: the block never writes an
     * argument's scratch, and no later unit has more rows than the first */
    int same_row[MAXOPS];
    for (int op = 0; op < nin; op++) {
        same_row[op] = pl->cls[op] != CLS_FIXED && !pl->full[op];
        for (int d = 0; same_row[op] && d < nd - 1; d++) same_row[op] = pl->strides[op][d] == 0;
    }
    for (npy_intp u = u0; u < u1; u++) {
        npy_intp r0 = u * pl->rpb;
        npy_intp nr = pl->rows - r0 < pl->rpb ? pl->rows - r0 : pl->rpb;
        for (int op = 0; op < nop; op++) {
            if (pl->cls[op] == CLS_FIXED) continue;
            if (pl->full[op]) {
                char *ptr = pl->data[op] + r0 * L * pl->itemsize[op];
                raw[op] = ptr;
                p[op] = pl->inplace[op] ? buf + slot * (size_t)op : ptr;
            }
            else {
                p[op] = buf + slot * (size_t)op;
                raw[op] = NULL; /* (never read: numpy loops read full operands only) */
            }
        }
        /* the outer index of row r0, then row by row */
        npy_intp r = r0;
        for (int d = nd - 2; d >= 0; d--) {
            idx[d] = r % pl->shape[d];
            r /= pl->shape[d];
        }
        for (npy_intp q = 0; q < nr; q++) {
            for (int op = 0; op < nin; op++) {
                if (pl->cls[op] == CLS_FIXED || pl->full[op] || (same_row[op] && u > u0))
                    continue;
                char *ptr = pl->data[op];
                for (int d = 0; d < nd - 1; d++) ptr += idx[d] * pl->strides[op][d];
                char *dst = p[op] + q * L * pl->itemsize[op];
                if (pl->strides[op][nd - 1] == 0) fill(dst, ptr, L, pl->itemsize[op]);
                else gather(dst, ptr, pl->strides[op][nd - 1], L, pl->itemsize[op]);
            }
            for (int d = nd - 2; d >= 0; d--) {
                if (++idx[d] < pl->shape[d]) break;
                idx[d] = 0;
            }
        }
        k->block(p, nr * L, k->loops, tmp, raw, step);
        r = r0;
        for (int d = nd - 2; d >= 0; d--) {
            idx[d] = r % pl->shape[d];
            r /= pl->shape[d];
        }
        for (npy_intp q = 0; q < nr; q++) {
            for (int op = nin; op < nop; op++) {
                if (pl->full[op] && !pl->inplace[op]) continue;
                char *ptr = pl->data[op];
                for (int d = 0; d < nd - 1; d++) ptr += idx[d] * pl->strides[op][d];
                scatter(ptr, pl->strides[op][nd - 1], p[op] + q * L * pl->itemsize[op], L,
                        pl->itemsize[op]);
            }
            for (int d = nd - 2; d >= 0; d--) {
                if (++idx[d] < pl->shape[d]) break;
                idx[d] = 0;
            }
        }
    }
}

/* run units [u0, u1) of the plan (a unit: one block of one row, or several short rows);
 * returns the raised floating-point exceptions (fenv flags) */
static int
work(const plan_t *pl, npy_intp u0, npy_intp u1)
{
    srcad_kernel *k = pl->k;
    const int nop = pl->nop, nin = k->nin, nd = pl->ndim;
    const npy_intp span = pl->rpb > 1 ? pl->rpb * pl->len : pl->blk;
    const size_t slot = (size_t)span * 8;
    char *buf = scratch(slot * (size_t)(nop + k->ntmp) + 64);
    if (buf == NULL) {
        return -1;
    }
    char *p[MAXOPS], *tmp[SRCAD_MAXARGS + 1], *raw[MAXOPS];
    intptr_t step[MAXOPS];
    for (int t = 0; t < k->ntmp; t++) {
        tmp[t] = buf + slot * (size_t)(nop + t);
    }
    for (int op = 0; op < nop; op++) {
        if (pl->cls[op] == CLS_FIXED) {
            p[op] = raw[op] = pl->data[op];
            step[op] = 0;
        }
        else {
            step[op] = pl->strides[op][nd - 1];
        }
    }
    feclearexcept(FE_ALL_EXCEPT);
    npy_intp idx[MAXD];
    if (pl->rpb > 1) {
        work_rows(pl, u0, u1, buf, slot, p, tmp, raw, step);
        return fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
    }
    for (npy_intp u = u0; u < u1; u++) {
        npy_intp r = u / pl->nblk, b = u % pl->nblk;
        /* the row's index over the outer axes */
        for (int d = nd - 2; d >= 0; d--) {
            idx[d] = r % pl->shape[d];
            r /= pl->shape[d];
        }
        npy_intp start = b * pl->blk;
        npy_intp n = pl->len - start < pl->blk ? pl->len - start : pl->blk;
        char *row[MAXOPS];
        for (int op = 0; op < nop; op++) {
            if (pl->cls[op] == CLS_FIXED) {
                continue;
            }
            char *ptr = pl->data[op];
            for (int d = 0; d < nd - 1; d++) {
                ptr += idx[d] * pl->strides[op][d];
            }
            ptr += start * pl->strides[op][nd - 1];
            row[op] = raw[op] = ptr;
            char *mine = buf + slot * (size_t)op;
            switch (pl->cls[op]) {
                case CLS_DIRECT: p[op] = ptr; break;
                case CLS_ZERO:
                    p[op] = mine;
                    if (op < nin) fill(mine, ptr, n, pl->itemsize[op]);
                    break;
                case CLS_STRIDED:
                    p[op] = mine;
                    if (op < nin) gather(mine, ptr, pl->strides[op][nd - 1], n, pl->itemsize[op]);
                    break;
            }
        }
        k->block(p, n, k->loops, tmp, raw, step);
        for (int op = nin; op < nop; op++) {
            if (pl->cls[op] == CLS_ZERO || pl->cls[op] == CLS_STRIDED) {
                scatter(row[op], pl->strides[op][nd - 1], p[op], n, pl->itemsize[op]);
            }
        }
    }
    return fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
}

static int
work_split(const void *pl, npy_intp lo, npy_intp hi)
{
    return work((const plan_t *)pl, lo, hi);
}

static int
npy_fpe(int flags)
{
    int e = 0;
    if (flags & FE_DIVBYZERO) e |= NPY_FPE_DIVIDEBYZERO;
    if (flags & FE_OVERFLOW) e |= NPY_FPE_OVERFLOW;
    if (flags & FE_UNDERFLOW) e |= NPY_FPE_UNDERFLOW;
    if (flags & FE_INVALID) e |= NPY_FPE_INVALID;
    return e;
}

/* numpy's reporting of floating-point exceptions (np.errstate: ignore, warn, raise, call) */
static int
give_fpe(const char *name, int fpe)
{
#ifdef PyUFunc_GiveFloatingpointErrors
    return PyUFunc_GiveFloatingpointErrors(name, fpe);
#else
    /* numpy 1.x has no public entry point: warn (numpy's default for all but underflow) */
    if (fpe & ~NPY_FPE_UNDERFLOW) {
        return PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "floating point error in %s", name);
    }
    return 0;
#endif
}

/* memory ranges [lo, hi) an array touches */
static void
extent(PyArrayObject *a, char **lo, char **hi)
{
    char *l = PyArray_BYTES(a), *h = PyArray_BYTES(a);
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp n = PyArray_DIM(a, d), s = PyArray_STRIDE(a, d);
        if (n == 0) {
            *lo = *hi = PyArray_BYTES(a);
            return;
        }
        if (s < 0) l += (n - 1) * s; else h += (n - 1) * s;
    }
    *lo = l;
    *hi = h + PyArray_ITEMSIZE(a);
}

/* does another argument share memory with output `o`'s in-place target (a view of it, or
 * the same array under another name)? Then it would have to see the update as numpy's
 * statement order dictates, which the fallback does: 1, with the reason in `why` */
static int
target_shared(srcad_kernel *k, PyArrayObject *const *arr, int o, char *why, size_t n)
{
    const int t = k->out[o].inout;
    PyArrayObject *A = arr[t];
    char *tlo, *thi;
    extent(A, &tlo, &thi);
    for (int i = 0; i < k->nin; i++) {
        if (i == t || arr[i] == NULL) continue;
        char *lo, *hi;
        extent(arr[i], &lo, &hi);
        if (arr[i] == A || (lo < thi && tlo < hi)) {
            snprintf(why, n, "argument `%s` shares memory with `%s`, which the kernel updates "
                     "in place", k->in[i].name, k->out[o].name);
            return 1;
        }
    }
    return 0;
}

/* out= array `o` (the bytes [glo, ghi)) against the kernel's other outputs (given ones and
 * in-place targets): -1 with a ValueError if it overlaps one, else 0 */
static int
outs_overlap(srcad_kernel *k, PyArrayObject *const *arr, PyObject *const *given, int nout,
             int o, char *glo, char *ghi)
{
    for (int q = 0; q < nout; q++) {
        PyArrayObject *H = k->out[q].inout >= 0 ? arr[k->out[q].inout]
                                                : (PyArrayObject *)given[q];
        if (q == o || H == NULL) continue;
        char *lo, *hi;
        extent(H, &lo, &hi);
        if (lo < ghi && glo < hi) {
            PyErr_Format(PyExc_ValueError, "srcad kernel %s: out[%d] shares memory with "
                         "out[%d]", k->name, o, q);
            return -1;
        }
    }
    return 0;
}

/* does `a` (an argument) hold exactly the elements of `g` (an out= array of the kernel's
 * shape): the same first byte, item size and strides on every axis longer than 1? */
static int
same_elements(PyArrayObject *g, PyArrayObject *a, int nd, const npy_intp *shape)
{
    if (PyArray_NDIM(a) != nd || PyArray_BYTES(a) != PyArray_BYTES(g) ||
        PyArray_ITEMSIZE(a) != PyArray_ITEMSIZE(g)) {
        return 0;
    }
    for (int d = 0; d < nd; d++) {
        if (PyArray_DIM(a, d) != shape[d]) return 0;
        if (shape[d] != 1 && PyArray_STRIDE(a, d) != PyArray_STRIDE(g, d)) return 0;
    }
    return 1;
}

/* -- row kernels ------------------------------------------------------------------------
 * A row kernel (k->rowwise: a chain with a reduction over the last axis) runs one row at a
 * time: its block function gets the row's length n and, for each argument and output, a
 * pointer to that row (one value for a per-row value). It runs only arguments of exactly
 * the shapes it was planned for, in C order (C-contiguous: every row contiguous, so that
 * numpy, unfused, would have summed each row pairwise as the block does); anything else
 * goes to the fallback. Its outputs are new C-contiguous arrays, arrays updated in place,
 * or out= arrays (C-contiguous, of the output's shape; one that is exactly an argument is
 * written through a scratch row once the block has read the whole row). */

typedef struct {
    srcad_kernel *k;
    int nop;
    npy_intp rows, len;
    int nouter;                 /* ndim - 1 */
    npy_intp outer[MAXD];       /* the outer axes' lengths */
    npy_intp ost[MAXOPS][MAXD]; /* each operand's byte strides over the outer axes */
    char *data[MAXOPS];
    int itemsize[MAXOPS];
    int one[MAXOPS];     /* one value per row (a row argument or output, or a number) */
    int through[MAXOPS]; /* an output written through scratch, copied after the block */
    npy_intp last[MAXOPS]; /* an argument's stride along the row: not its item size, the row
                            * is filled (0) or gathered into scratch first */
    int chunk;             /* run k->block_rows on chunks of rows (rows_chunkable) */
    npy_intp rs[MAXOPS];   /* then: each operand's bytes from one row to the next */
} rowplan_t;

/* Can the kernel's chunk function run this plan: has it one, and are every operand's rows
 * evenly spaced (row r at data + r * rs over all outer axes: C order, or the same row for
 * all), none gathered or filled? Sets pl->rs. (An output written through scratch is
 * written into a chunk of scratch rows, copied out after the chunk.) */
static int
rows_chunkable(rowplan_t *pl)
{
    srcad_kernel *k = pl->k;
    if (k->block_rows == NULL || pl->rows < 2) return 0;
    for (int op = 0; op < pl->nop; op++) {
        const int value = op < k->nin && k->in[op].kind != SRCAD_ARRAY;
        if (op < k->nin && !value && !pl->one[op] && pl->last[op] != pl->itemsize[op])
            return 0;
        npy_intp rs = 0, span = 1;
        int set = 0;
        for (int d = pl->nouter - 1; d >= 0; d--) {
            if (pl->outer[d] == 1) continue;
            const npy_intp st = value ? 0 : pl->ost[op][d];
            if (!set) {
                rs = st;
                set = 1;
            }
            else if (st != rs * span) {
                return 0;
            }
            span *= pl->outer[d];
        }
        pl->rs[op] = rs;
    }
    return 1;
}

static int
rows_work(const rowplan_t *pl, npy_intp r0, npy_intp r1)
{
    srcad_kernel *k = pl->k;
    const int nop = pl->nop, nin = k->nin;
    const npy_intp L = pl->len;
    char *p[MAXOPS], *tmp[SRCAD_MAXARGS + 1], *raw[MAXOPS], *at[MAXOPS];
    intptr_t step[MAXOPS];
    if (pl->chunk) {
        /* SRCAD_ROWS rows at most, and no more than fill SRCAD_BLOCK elements per scratch
         * value (a chunk's scratch stays in the L1 cache) */
        npy_intp R = L > 0 ? SRCAD_BLOCK / L : SRCAD_ROWS;
        R = R < 1 ? 1 : (R > SRCAD_ROWS ? SRCAD_ROWS : R);
        const size_t cslot = ((size_t)(R * L) * 8 + 63) & ~(size_t)63;
        char *cbuf = scratch(cslot * (size_t)(nop + k->ntmp) + 64);
        if (cbuf == NULL) return -1;
        for (int t = 0; t < k->ntmp; t++) tmp[t] = cbuf + cslot * (size_t)(nop + t);
        npy_intp rs[MAXOPS]; /* (an output written through scratch: its scratch rows') */
        for (int op = 0; op < nop; op++) {
            rs[op] = pl->through[op] ? (pl->one[op] ? 1 : L) * pl->itemsize[op] : pl->rs[op];
        }
        feclearexcept(FE_ALL_EXCEPT);
        for (npy_intp r = r0; r < r1; r += R) {
            const npy_intp nr = r1 - r < R ? r1 - r : R;
            for (int op = 0; op < nop; op++) {
                p[op] = pl->through[op] ? cbuf + cslot * (size_t)op : pl->data[op] + r * rs[op];
            }
            k->block_rows(p, rs, nr, L, k->loops, tmp);
            for (int op = nin; op < nop; op++) {
                if (!pl->through[op]) continue;
                for (npy_intp q = 0; q < nr; q++) {
                    memcpy(pl->data[op] + (r + q) * pl->rs[op], p[op] + q * rs[op],
                           (size_t)rs[op]);
                }
            }
        }
        return fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
    }
    const size_t slot = ((size_t)L * 8 + 63) & ~(size_t)63;
    char *buf = scratch(slot * (size_t)(nop + k->ntmp) + 64);
    if (buf == NULL) return -1;
    for (int t = 0; t < k->ntmp; t++) tmp[t] = buf + slot * (size_t)(nop + t);
    feclearexcept(FE_ALL_EXCEPT);
    for (npy_intp r = r0; r < r1; r++) {
        npy_intp rest = r, idx[MAXD];
        for (int d = pl->nouter - 1; d >= 0; d--) {
            idx[d] = rest % pl->outer[d];
            rest /= pl->outer[d];
        }
        for (int op = 0; op < nop; op++) {
            char *ptr = pl->data[op];
            if (op >= nin || k->in[op].kind == SRCAD_ARRAY) {
                for (int d = 0; d < pl->nouter; d++) ptr += idx[d] * pl->ost[op][d];
            }
            at[op] = ptr;
            p[op] = raw[op] = pl->through[op] ? buf + slot * (size_t)op : ptr;
            if (op < nin && !pl->one[op] && pl->last[op] != pl->itemsize[op]) {
                p[op] = raw[op] = buf + slot * (size_t)op;
                if (pl->last[op] == 0) fill(p[op], ptr, L, pl->itemsize[op]);
                else gather(p[op], ptr, pl->last[op], L, pl->itemsize[op]);
            }
            step[op] = pl->one[op] ? 0 : pl->itemsize[op];
        }
        k->block(p, L, k->loops, tmp, raw, step);
        for (int op = nin; op < nop; op++) {
            if (pl->through[op]) {
                memcpy(at[op], p[op], (size_t)(pl->one[op] ? 1 : L) * (size_t)pl->itemsize[op]);
            }
        }
    }
    return fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
}

/* a kernel's share of the team (srcad_gemm.h team_run): units [lo, hi) of its plan, and the
 * floating-point flags it raised (OR-ed over the shares) */
static int
rows_split(const void *pl, npy_intp lo, npy_intp hi)
{
    int f = rows_work((const rowplan_t *)pl, lo, hi);
    return f < 0 ? (int)0x40000000 : f;
}

static PyObject *
run_rows(srcad_kernel *k, PyObject *const *args, Py_ssize_t nargs, PyObject *const *given,
         PyArrayObject *const *arr, char *const *val)
{
    const int nin = k->nin, nout = k->nout, nd = k->ndim, nop = nin + nout;
    char why[400];
    rowplan_t pl;
    pl.k = k;
    pl.nop = nop;
    pl.len = k->shape[nd - 1];
    pl.nouter = nd - 1;
    pl.rows = 1;
    for (int d = 0; d < nd - 1; d++) {
        pl.outer[d] = k->shape[d];
        pl.rows *= k->shape[d];
    }
    npy_intp rshape[MAXD];
    memcpy(rshape, k->shape, sizeof(npy_intp) * (size_t)nd);
    rshape[nd - 1] = 1;
    /* the arguments: their planned shapes, C-contiguous */
    for (int i = 0; i < nin; i++) {
        pl.through[i] = 0;
        pl.one[i] = arr[i] == NULL || (k->row_in >> i & 1);
        pl.itemsize[i] = 8;
        if (arr[i] == NULL) {
            pl.data[i] = val[i];
            continue;
        }
        PyArrayObject *A = arr[i];
        const intptr_t *want = k->in_shape + (size_t)i * (size_t)nd;
        int ndA = PyArray_NDIM(A), ok = 1, has = 0;
        for (int d = 0; d < nd; d++) has += want[d] >= 0;
        ok = ndA == has;
        for (int d = 0; ok && d < ndA; d++) ok = PyArray_DIM(A, d) == want[nd - ndA + d];
        if (!ok) {
            snprintf(why, sizeof(why), "argument `%s` does not have the shape the row kernel "
                     "was planned for", k->in[i].name);
            return fall_back(k, args, nargs, why, given);
        }
        pl.data[i] = PyArray_BYTES(A);
        pl.itemsize[i] = (int)PyArray_ITEMSIZE(A);
        npy_intp al[MAXD]; /* its strides aligned to the kernel's axes, 0 where broadcast */
        for (int d = 0; d < nd; d++) {
            int dd = d - (nd - ndA);
            al[d] = (dd < 0 || PyArray_DIM(A, dd) == 1) ? 0 : PyArray_STRIDE(A, dd);
            if (d < nd - 1) pl.ost[i][d] = al[d];
        }
        pl.last[i] = al[nd - 1];
        /* numpy lays new results out in C order only when every argument is in C order
         * (stride 0 aside), and sums a row pairwise -- and its SIMD loops compute one as
         * they do a contiguous one -- only when its elements are adjacent */
        if (!is_c_compatible(nd, al) ||
            ((k->dense_in >> i & 1) && pl.last[i] != pl.itemsize[i] && pl.len > 1)) {
            snprintf(why, sizeof(why), "argument `%s` is not in C order, or its rows are "
                     "strided where the kernel reduces them or hands them to numpy's loop "
                     "(numpy would lay out or sum its rows in another order)", k->in[i].name);
            return fall_back(k, args, nargs, why, given);
        }
    }
    /* in-place targets: writeable, sharing memory with no other argument */
    for (int o = 0; o < nout; o++) {
        int t = k->out[o].inout;
        if (t < 0) continue;
        PyArrayObject *A = arr[t];
        const npy_intp *tshape = (k->row_in >> t & 1) ? rshape : k->shape;
        int ok = A != NULL && PyArray_NDIM(A) == nd && PyArray_ISWRITEABLE(A) &&
                 PyArray_TYPE(A) == k->out[o].type && PyArray_IS_C_CONTIGUOUS(A);
        for (int d = 0; ok && d < nd; d++) ok = PyArray_DIM(A, d) == tshape[d];
        if (!ok) {
            snprintf(why, sizeof(why), "`%s` cannot be updated in place here", k->out[o].name);
            return fall_back(k, args, nargs, why, given);
        }
        if (target_shared(k, arr, o, why, sizeof(why)))
            return fall_back(k, args, nargs, why, given);
    }
    /* out= arrays: the output's shape, C-contiguous; memory of their own or exactly an
     * argument's */
    int over[SRCAD_MAXARGS];
    for (int o = 0; o < nout; o++) {
        over[o] = 0;
        if (given == NULL || given[o] == NULL || k->out[o].inout >= 0) {
            if (given != NULL && given[o] != NULL && given[o] != (PyObject *)arr[k->out[o].inout]) {
                PyErr_Format(PyExc_ValueError, "srcad kernel %s: out[%d] is not the array "
                             "updated in place", k->name, o);
                return NULL;
            }
            continue;
        }
        PyArrayObject *G = (PyArrayObject *)given[o];
        const npy_intp *oshape = (k->row_out >> o & 1) ? rshape : k->shape;
        int ok = PyArray_NDIM(G) == nd;
        for (int d = 0; ok && d < nd; d++) ok = PyArray_DIM(G, d) == oshape[d];
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "srcad kernel %s: out[%d] has the wrong shape",
                         k->name, o);
            return NULL;
        }
        if (!PyArray_IS_C_CONTIGUOUS(G)) {
            return fall_back(k, args, nargs, "an out= array is not C-contiguous", given);
        }
        char *glo, *ghi;
        extent(G, &glo, &ghi);
        for (int i = 0; i < nin; i++) {
            char *lo, *hi;
            if (arr[i] == NULL) continue;
            extent(arr[i], &lo, &hi);
            if (!(lo < ghi && glo < hi)) continue;
            if (same_elements(G, arr[i], nd, oshape)) {
                over[o] = 1;
                continue;
            }
            PyErr_Format(PyExc_ValueError, "srcad kernel %s: out[%d] shares memory with "
                         "argument `%s` (other than being that very array)", k->name, o,
                         k->in[i].name);
            return NULL;
        }
        if (outs_overlap(k, arr, given, nout, o, glo, ghi) < 0) return NULL;
    }
    PyObject *outs[SRCAD_MAXARGS];
    for (int o = 0; o < nout; o++) {
        int op = nin + o, row = (int)(k->row_out >> o & 1);
        if (k->out[o].inout >= 0) {
            outs[o] = Py_NewRef((PyObject *)arr[k->out[o].inout]);
        }
        else if (given != NULL && given[o] != NULL) {
            outs[o] = Py_NewRef(given[o]);
        }
        else {
            outs[o] = PyArray_SimpleNew(nd, row ? rshape : k->shape, k->out[o].type);
            if (outs[o] == NULL) {
                for (int q = 0; q < o; q++) Py_DECREF(outs[q]);
                return NULL;
            }
        }
        PyArrayObject *A = (PyArrayObject *)outs[o];
        pl.data[op] = PyArray_BYTES(A);
        pl.itemsize[op] = (int)PyArray_ITEMSIZE(A);
        pl.one[op] = row;
        pl.through[op] = k->out[o].inout >= 0 || over[o];
        /* (C-contiguous: row r starts at r times the row's size) */
        npy_intp s = (row ? 1 : pl.len) * pl.itemsize[op];
        for (int d = nd - 2; d >= 0; d--) {
            pl.ost[op][d] = k->shape[d] == 1 ? 0 : s;
            s *= k->shape[d];
        }
    }
    npy_intp total = pl.rows * pl.len;
    pl.chunk = rows_chunkable(&pl);
    n_row_chunked += (unsigned long long)pl.chunk;
    if (total > 0) {
        int nt = (total >= parallel_min && num_threads > 1) ? num_threads : 1;
        if (nt > 1 && adaptive && (k->ns_serial == 0.0 || k->backoff > 0)) {
            if (k->backoff > 0) k->backoff--;
            nt = 1;
        }
        if (pl.rows < nt) nt = (int)pl.rows;
        int flags = 0;
        double t_start = now();
        Py_BEGIN_ALLOW_THREADS
        team_split job = {rows_split, &pl, pl.rows, nt, 0, 0, 0, 0};
        if (nt > 1 && team_run(nt, team_split_run, &job)) {
            flags = job.flags;
        }
        else
            flags = rows_work(&pl, 0, pl.rows);
        Py_END_ALLOW_THREADS
        if (total >= parallel_min && num_threads > 1) {
            double per = (now() - t_start) / (double)total;
            if (nt == 1) {
                k->ns_serial = k->ns_serial == 0.0 ? per : 0.75 * k->ns_serial + 0.25 * per;
            }
            else if (per > 1.1 * k->ns_serial) {
                k->penalty = k->penalty == 0 ? 8 : (k->penalty < 4096 ? 2 * k->penalty : 4096);
                k->backoff = k->penalty;
            }
            else {
                k->penalty = 0;
            }
        }
        if (flags < 0 || (flags & 0x40000000)) {
            for (int o = 0; o < nout; o++) Py_DECREF(outs[o]);
            PyErr_NoMemory();
            return NULL;
        }
        if (flags & (FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID)) {
            if (give_fpe(k->name, npy_fpe(flags)) < 0) {
                for (int o = 0; o < nout; o++) Py_DECREF(outs[o]);
                return NULL;
            }
        }
    }
    if (nout == 1) return outs[0];
    PyObject *tuple = PyTuple_New(nout);
    if (tuple == NULL) {
        for (int o = 0; o < nout; o++) Py_DECREF(outs[o]);
        return NULL;
    }
    for (int o = 0; o < nout; o++) PyTuple_SET_ITEM(tuple, o, outs[o]);
    return tuple;
}

/* -- run ------------------------------------------------------------------------------------ */

typedef union {
    double d;
    char bytes[32];
} slot_t;

static PyObject *run_impl(srcad_kernel *k, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *const *given);

static PyObject *
run(srcad_kernel *k, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) {
        return run_impl(k, args, nargs, NULL);
    }
    PyObject *name = PyTuple_GET_ITEM(kwnames, 0);
    if (PyTuple_GET_SIZE(kwnames) != 1 || !PyUnicode_Check(name) ||
        PyUnicode_CompareWithASCIIString(name, "out") != 0) {
        PyErr_Format(PyExc_TypeError, "srcad kernel %s takes one keyword argument, out=",
                     k->name);
        return NULL;
    }
    PyObject *out = args[nargs];
    PyObject *given[SRCAD_MAXARGS];
    if (k->nout == 1 && !PyTuple_Check(out)) {
        given[0] = out;
    }
    else if (PyTuple_Check(out) && PyTuple_GET_SIZE(out) == k->nout) {
        for (int o = 0; o < k->nout; o++) given[o] = PyTuple_GET_ITEM(out, o);
    }
    else {
        PyErr_Format(PyExc_TypeError, "srcad kernel %s: out= must be a tuple of %d arrays",
                     k->name, k->nout);
        return NULL;
    }
    for (int o = 0; o < k->nout; o++) {
        if (given[o] == Py_None) {
            given[o] = NULL;
        }
        else if (!PyArray_CheckExact(given[o]) ||
                 PyArray_TYPE((PyArrayObject *)given[o]) != k->out[o].type ||
                 !PyArray_ISWRITEABLE((PyArrayObject *)given[o]) ||
                 !PyArray_ISALIGNED((PyArrayObject *)given[o]) ||
                 !PyArray_ISNOTSWAPPED((PyArrayObject *)given[o])) {
            PyErr_Format(PyExc_TypeError, "srcad kernel %s: out[%d] must be a writeable "
                         "%s array", k->name, o, type_name(k->out[o].type));
            return NULL;
        }
    }
    return run_impl(k, args, nargs, given);
}

static PyObject *
run_impl(srcad_kernel *k, PyObject *const *args, Py_ssize_t nargs, PyObject *const *given)
{
    const int nin = k->nin, nout = k->nout, nd = k->ndim, nop = nin + nout;
    char why[400];
    if (nargs != nin) {
        PyErr_Format(PyExc_TypeError, "srcad kernel %s takes %d arguments (%zd given)",
                     k->name, nin, nargs);
        return NULL;
    }
    n_calls++;
    npy_intp shape[MAXD];
    for (int d = 0; d < nd; d++) {
        shape[d] = 1;
    }
    PyArrayObject *arr[SRCAD_MAXARGS];
    char *val[SRCAD_MAXARGS];
    slot_t slots[SRCAD_MAXARGS];

    /* 1. the arguments */
    for (int i = 0; i < nin; i++) {
        PyObject *o = args[i];
        const srcad_arg *a = &k->in[i];
        arr[i] = NULL;
        val[i] = NULL;
        if (a->kind == SRCAD_ARRAY) {
            if (!PyArray_CheckExact(o)) {
                snprintf(why, sizeof(why), "argument `%s` is a %s, not a numpy.ndarray",
                         a->name, Py_TYPE(o)->tp_name);
                return fall_back(k, args, nargs, why, given);
            }
            PyArrayObject *A = (PyArrayObject *)o;
            if (PyArray_TYPE(A) != a->type || !PyArray_ISNOTSWAPPED(A) ||
                !PyArray_ISALIGNED(A)) {
                snprintf(why, sizeof(why), "argument `%s` is a %s array%s; the kernel was "
                         "built for %s", a->name, type_name(PyArray_TYPE(A)),
                         PyArray_ISNOTSWAPPED(A) && PyArray_ISALIGNED(A) ? "" :
                         " (byte-swapped or unaligned)", type_name(a->type));
                return fall_back(k, args, nargs, why, given);
            }
            int ndA = PyArray_NDIM(A);
            if (ndA > nd) {
                snprintf(why, sizeof(why), "argument `%s` has %d dimensions; the kernel's "
                         "shape has %d", a->name, ndA, nd);
                return fall_back(k, args, nargs, why, given);
            }
            for (int d = 0; d < ndA; d++) {
                npy_intp s = PyArray_DIM(A, d);
                int dd = nd - ndA + d;
                if (s == 1) continue;
                if (shape[dd] == 1) shape[dd] = s;
                else if (shape[dd] != s) {
                    snprintf(why, sizeof(why), "argument `%s` does not broadcast with the "
                             "others (axis %d: %zd vs %zd)", a->name, dd, (Py_ssize_t)s,
                             (Py_ssize_t)shape[dd]);
                    return fall_back(k, args, nargs, why, given);
                }
            }
            arr[i] = A;
        }
        else if (a->kind == SRCAD_SCALAR_OR_NUMBER && (PyFloat_CheckExact(o) ||
                                                       PyLong_CheckExact(o) ||
                                                       PyBool_Check(o))) {
            double d = PyFloat_CheckExact(o) ? PyFloat_AS_DOUBLE(o) : PyLong_AsDouble(o);
            if (d == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                snprintf(why, sizeof(why), "argument `%s` is an int too large for a float",
                         a->name);
                return fall_back(k, args, nargs, why, given);
            }
            if (a->type == NPY_FLOAT) {
                float f = (float)d;
                memcpy(slots[i].bytes, &f, sizeof f);
            }
            else if (a->type == NPY_DOUBLE) {
                memcpy(slots[i].bytes, &d, sizeof d);
            }
            else {
                snprintf(why, sizeof(why), "argument `%s`: a number for a %s", a->name,
                         type_name(a->type));
                return fall_back(k, args, nargs, why, given);
            }
            val[i] = slots[i].bytes;
        }
        else if (a->kind == SRCAD_SCALAR || a->kind == SRCAD_SCALAR_OR_NUMBER) {
            if (PyArray_CheckExact(o) && PyArray_NDIM((PyArrayObject *)o) == 0 &&
                PyArray_TYPE((PyArrayObject *)o) == a->type &&
                PyArray_ISNOTSWAPPED((PyArrayObject *)o) &&
                PyArray_ISALIGNED((PyArrayObject *)o) &&
                PyArray_ITEMSIZE((PyArrayObject *)o) <= (npy_intp)sizeof(slots[i].bytes)) {
                /* (a copy: an output that overlaps the 0-d array cannot change it mid-call) */
                memcpy(slots[i].bytes, PyArray_BYTES((PyArrayObject *)o),
                       (size_t)PyArray_ITEMSIZE((PyArrayObject *)o));
                val[i] = slots[i].bytes;
            }
            else if (PyArray_IsScalar(o, Generic)) {
                PyArray_Descr *descr = PyArray_DescrFromScalar(o);
                int ok = descr != NULL && descr->type_num == a->type &&
                         PyArray_ISNBO(descr->byteorder) && PyDataType_ELSIZE(descr) <= 32;
                Py_XDECREF(descr);
                if (!ok) {
                    PyErr_Clear();
                    snprintf(why, sizeof(why), "argument `%s` is a %s; the kernel was built "
                             "for a %s", a->name, Py_TYPE(o)->tp_name, type_name(a->type));
                    return fall_back(k, args, nargs, why, given);
                }
                PyArray_ScalarAsCtype(o, slots[i].bytes);
                val[i] = slots[i].bytes;
            }
            else {
                snprintf(why, sizeof(why), "argument `%s` is a %s; the kernel was built for a "
                         "0-d %s", a->name, Py_TYPE(o)->tp_name, type_name(a->type));
                return fall_back(k, args, nargs, why, given);
            }
        }
        else { /* SRCAD_NUMBER */
            if (PyFloat_CheckExact(o)) {
                slots[i].d = PyFloat_AS_DOUBLE(o);
            }
            else if (PyBool_Check(o)) {
                slots[i].d = o == Py_True ? 1.0 : 0.0;
            }
            else if (PyLong_CheckExact(o)) {
                slots[i].d = PyLong_AsDouble(o);
                if (slots[i].d == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();
                    snprintf(why, sizeof(why), "argument `%s` is an int too large for a "
                             "float", a->name);
                    return fall_back(k, args, nargs, why, given);
                }
            }
            else {
                snprintf(why, sizeof(why), "argument `%s` is a %s; the kernel was built for "
                         "a Python number", a->name, Py_TYPE(o)->tp_name);
                return fall_back(k, args, nargs, why, given);
            }
            val[i] = (char *)&slots[i].d;
        }
    }

    if (k->rowwise) {
        return run_rows(k, args, nargs, given, arr, val);
    }

    /* 2. every statement has the kernel's shape: one whose array operands are all
     * arguments must broadcast them to it (one that reads a statement has it already) */
    for (int j = 0; j < k->nstmt; j++) {
        int own = 1;
        for (int q = k->stmt_start[j]; q < k->stmt_start[j + 1]; q++) {
            if (k->stmt_ops[q] < 0) own = 0;
        }
        if (!own) continue;
        for (int d = 0; d < nd; d++) {
            npy_intp s = 1;
            for (int q = k->stmt_start[j]; q < k->stmt_start[j + 1]; q++) {
                PyArrayObject *A = arr[k->stmt_ops[q]];
                if (A == NULL) continue;
                int dd = d - (nd - PyArray_NDIM(A));
                if (dd >= 0 && PyArray_DIM(A, dd) != 1) s = PyArray_DIM(A, dd);
            }
            if (s != shape[d]) {
                snprintf(why, sizeof(why), "statement %d would have another shape than the "
                         "kernel's", j);
                return fall_back(k, args, nargs, why, given);
            }
        }
    }
    npy_intp total = 1;
    for (int d = 0; d < nd; d++) {
        total *= shape[d];
    }

    /* aligned strides of the array arguments: 0 on broadcast and length-1 axes */
    static _Thread_local npy_intp st[MAXOPS][MAXD];
    for (int i = 0; i < nin; i++) {
        if (arr[i] == NULL) {
            for (int d = 0; d < nd; d++) st[i][d] = 0;
            continue;
        }
        int off = nd - PyArray_NDIM(arr[i]);
        for (int d = 0; d < nd; d++) {
            st[i][d] = (d < off || shape[d] == 1 || PyArray_DIM(arr[i], d - off) == 1)
                           ? 0 : PyArray_STRIDE(arr[i], d - off);
        }
    }

    /* 3. outputs: in-place targets must be writeable and have the kernel's shape */
    for (int o = 0; o < nout; o++) {
        int t = k->out[o].inout;
        if (t < 0) continue;
        PyArrayObject *A = arr[t];
        int ok = A != NULL && PyArray_NDIM(A) == nd && PyArray_ISWRITEABLE(A) &&
                 PyArray_TYPE(A) == k->out[o].type;
        for (int d = 0; ok && d < nd; d++) {
            ok = PyArray_DIM(A, d) == shape[d];
        }
        if (!ok) {
            snprintf(why, sizeof(why), "`%s` cannot be updated in place here", k->out[o].name);
            return fall_back(k, args, nargs, why, given);
        }
        if (target_shared(k, arr, o, why, sizeof(why)))
            return fall_back(k, args, nargs, why, given);
    }

    /* new outputs, each in numpy's order for its statement */
    int c_order = 1;
    for (int i = 0; i < nin && c_order; i++) {
        if (arr[i] != NULL && !is_c_compatible(nd, st[i])) c_order = 0;
    }
    static _Thread_local npy_intp sst[MAXOPS][MAXD]; /* statements' strides (layout only) */
    static _Thread_local int sorder[MAXOPS][MAXD];
    if (!c_order) {
        if (k->nstmt > MAXOPS) {
            snprintf(why, sizeof(why), "too many statements for the layout rule");
            return fall_back(k, args, nargs, why, given);
        }
        for (int j = 0; j < k->nstmt; j++) {
            npy_intp *ops[MAXOPS + 1];
            int nops = 0;
            for (int q = k->stmt_start[j]; q < k->stmt_start[j + 1]; q++) {
                int r = k->stmt_ops[q];
                ops[nops++] = r >= 0 ? st[r] : sst[-r - 1];
            }
            best_order(nd, nops, ops, sorder[j]);
            strides_for_order(nd, shape, sorder[j], 1, sst[j]);
            for (int d = 0; d < nd; d++) {
                if (shape[d] == 1) sst[j][d] = 0;
            }
        }
        /* an in-place statement's value has its target's layout */
        for (int o = 0; o < nout; o++) {
            if (k->out[o].inout >= 0) memcpy(sst[k->out[o].stmt], st[k->out[o].inout],
                                             sizeof(npy_intp) * nd);
        }
    }
    /* out= arrays: the kernel's shape, and memory of their own -- or exactly an argument's
     * (C-contiguous, the same first byte, the same strides: the memory plan hands a dying
     * C-contiguous operand's buffer to the kernel's result; another layout is refused, since
     * numpy's own loops inside a kernel may then round differently from the unplanned call). Such an output is written in place as
     * an inout target is: through scratch, after the block has read the argument; an
     * elementwise kernel then reads every element before it writes it. Any other overlap
     * (a view shifted, reversed or strided over an argument; another output) is refused. */
    int over[SRCAD_MAXARGS];
    for (int o = 0; o < nout; o++) over[o] = 0;
    for (int o = 0; given != NULL && o < nout; o++) {
        if (given[o] == NULL) continue;
        PyArrayObject *G = (PyArrayObject *)given[o];
        int ok = PyArray_NDIM(G) == nd;
        for (int d = 0; ok && d < nd; d++) ok = PyArray_DIM(G, d) == shape[d];
        if (!ok || (k->out[o].inout >= 0 && G != arr[k->out[o].inout])) {
            PyErr_Format(PyExc_ValueError, "srcad kernel %s: out[%d] has the wrong shape%s",
                         k->name, o, k->out[o].inout >= 0 ? " (or is not the array updated "
                         "in place)" : "");
            return NULL;
        }
        if (k->out[o].inout >= 0) continue;
        char *glo, *ghi;
        extent(G, &glo, &ghi);
        int dense = total > 0 && ghi - glo == (npy_intp)(total * PyArray_ITEMSIZE(G));
        for (int i = 0; i < nin; i++) {
            char *lo, *hi;
            if (arr[i] == NULL) continue;
            extent(arr[i], &lo, &hi);
            if (!(lo < ghi && glo < hi)) continue;
            if (dense && PyArray_IS_C_CONTIGUOUS(G) && same_elements(G, arr[i], nd, shape)) {
                over[o] = 1;
                continue;
            }
            PyErr_Format(PyExc_ValueError, "srcad kernel %s: out[%d] shares memory with "
                         "argument `%s`%s", k->name, o, k->in[i].name,
                         dense ? " (other than being that very C-contiguous array)" : "");
            return NULL;
        }
        if (outs_overlap(k, arr, given, nout, o, glo, ghi) < 0) return NULL;
    }
    PyObject *outs[SRCAD_MAXARGS];
    int first_new = -1;
    for (int o = 0; o < nout; o++) {
        if (k->out[o].inout >= 0) {
            outs[o] = (PyObject *)arr[k->out[o].inout];
            Py_INCREF(outs[o]);
            continue;
        }
        if (given != NULL && given[o] != NULL) {
            outs[o] = Py_NewRef(given[o]);
            continue;
        }
        PyArray_Descr *descr = PyArray_DescrFromType(k->out[o].type);
        if (descr == NULL) goto fail_outs_o;
        npy_intp strides[MAXD];
        if (!c_order) {
            strides_for_order(nd, shape, sorder[k->out[o].stmt], PyDataType_ELSIZE(descr), strides);
        }
        outs[o] = PyArray_NewFromDescr(&PyArray_Type, descr, nd, shape,
                                       c_order ? NULL : strides, NULL, 0, NULL);
        if (outs[o] == NULL) goto fail_outs_o;
        if (first_new < 0) first_new = o;
        continue;
    fail_outs_o:
        for (int q = 0; q < o; q++) Py_DECREF(outs[q]);
        return NULL;
    }

    /* 4. the iteration */
    if (total > 0) {
        plan_t pl;
        pl.k = k;
        pl.nop = nop;
        int order[MAXD];
        if (first_new == 0) {
            if (c_order) {
                for (int d = 0; d < nd; d++) order[d] = nd - 1 - d;
            }
            else {
                memcpy(order, sorder[k->out[0].stmt], sizeof(int) * nd);
            }
        }
        else {  /* the first result's memory order (an array given or updated in place) */
            npy_intp s0[MAXD];
            PyArrayObject *A = (PyArrayObject *)outs[0];
            for (int d = 0; d < nd; d++) s0[d] = shape[d] == 1 ? 0 : PyArray_STRIDE(A, d);
            const npy_intp *one[1] = {s0};
            best_order(nd, 1, (npy_intp *const *)one, order);
        }
        /* operands' strides in iteration order (outermost first) */
        npy_intp its[MAXOPS][MAXD], ish[MAXD];
        int m = 0;
        for (int q = nd - 1; q >= 0; q--) {
            int ax = order[q];
            if (shape[ax] == 1) continue;
            ish[m] = shape[ax];
            for (int op = 0; op < nop; op++) {
                if (op < nin) {
                    its[op][m] = arr[op] != NULL ? st[op][ax] : 0;
                }
                else {
                    PyArrayObject *A = (PyArrayObject *)outs[op - nin];
                    its[op][m] = PyArray_STRIDE(A, ax);
                }
            }
            m++;
        }
        if (m == 0) {
            ish[0] = 1;
            for (int op = 0; op < nop; op++) its[op][0] = 0;
            m = 1;
        }
        /* merge axes that are contiguous for every operand */
        int w = 0;
        pl.shape[0] = ish[0];
        for (int op = 0; op < nop; op++) pl.strides[op][0] = its[op][0];
        for (int q = 1; q < m; q++) {
            int merge = 1;
            for (int op = 0; op < nop && merge; op++) {
                if (op < nin && arr[op] == NULL) continue;
                if (pl.strides[op][w] != its[op][q] * ish[q]) merge = 0;
            }
            if (merge) {
                pl.shape[w] *= ish[q];
                for (int op = 0; op < nop; op++) pl.strides[op][w] = its[op][q];
            }
            else {
                w++;
                pl.shape[w] = ish[q];
                for (int op = 0; op < nop; op++) pl.strides[op][w] = its[op][q];
            }
        }
        pl.ndim = w + 1;
        pl.len = pl.shape[pl.ndim - 1];
        pl.rows = total / pl.len;
        int need_scratch = k->ntmp > 0;
        for (int op = 0; op < nop; op++) {
            if (op < nin && arr[op] == NULL) {
                pl.cls[op] = CLS_FIXED;
                pl.data[op] = val[op];
                pl.itemsize[op] = 8;
                continue;
            }
            PyArrayObject *A = op < nin ? arr[op] : (PyArrayObject *)outs[op - nin];
            pl.data[op] = PyArray_BYTES(A);
            pl.itemsize[op] = (int)PyArray_ITEMSIZE(A);
            npy_intp s = pl.strides[op][pl.ndim - 1];
            int inplace = op >= nin && (k->out[op - nin].inout >= 0 || over[op - nin]);
            pl.inplace[op] = inplace;
            if (s == pl.itemsize[op] && !inplace) pl.cls[op] = CLS_DIRECT;
            else if (s == 0 && op < nin) pl.cls[op] = CLS_ZERO;
            else pl.cls[op] = CLS_STRIDED;
            if (inplace && s == 0) pl.cls[op] = CLS_STRIDED;
            if (pl.cls[op] != CLS_DIRECT) need_scratch = 1;
        }
        /* short rows, several per block (when numpy loops read only operands contiguous
         * over the iteration, since they are handed one pointer per block) */
        pl.rpb = 1;
        if (pl.ndim >= 2 && need_scratch && pl.len < SRCAD_BLOCK / 2) {
            int ok = 1;
            for (int op = 0; op < nop; op++) {
                pl.full[op] = 0;
                if (pl.cls[op] == CLS_FIXED) continue;
                int f = pl.strides[op][pl.ndim - 1] == pl.itemsize[op];
                for (int d = 0; f && d < pl.ndim - 1; d++) {
                    f = pl.strides[op][d] == pl.strides[op][d + 1] * pl.shape[d + 1];
                }
                pl.full[op] = f;
                if (op < nin && (k->raw_mask >> op & 1) && !f) ok = 0;
            }
            if (ok) pl.rpb = SRCAD_BLOCK / pl.len;
        }
        int nt = (total >= parallel_min && num_threads > 1) ? num_threads : 1;
        /* threads only where they have paid off: a kernel's first large call runs on one
         * thread (its speed per element is remembered); a parallel call slower than that
         * (another process had the other core: the team waited a whole time slice for
         * it) sends the kernel back to one thread for 8, 16, ... 4096 calls */
        if (nt > 1 && adaptive && (k->ns_serial == 0.0 || k->backoff > 0)) {
            if (k->backoff > 0) k->backoff--;
            nt = 1;
        }
        pl.blk = need_scratch ? SRCAD_BLOCK : pl.len;
        if (nt > 1 && pl.rows < nt && pl.blk == pl.len) {
            npy_intp b = (pl.len + nt - 1) / nt;
            pl.blk = (b + 63) & ~(npy_intp)63;
        }
        pl.nblk = (pl.len + pl.blk - 1) / pl.blk;
        npy_intp units = pl.rpb > 1 ? (pl.rows + pl.rpb - 1) / pl.rpb : pl.rows * pl.nblk;
        if (units < nt) nt = (int)units;
        int flags = 0;
        double t_start = now();
        if (total >= 16384) {
            Py_BEGIN_ALLOW_THREADS
            team_split job = {work_split, &pl, units, nt, 0, 0, 0, 0};
            if (nt > 1 && team_run(nt, team_split_run, &job)) {
                flags = job.flags;
            }
            else
                flags = work(&pl, 0, units);
            Py_END_ALLOW_THREADS
        }
        else {
            flags = work(&pl, 0, units);
        }
        if (total >= parallel_min && num_threads > 1) {
            double per = (now() - t_start) / (double)total;
            if (nt == 1) {
                k->ns_serial = k->ns_serial == 0.0 ? per : 0.75 * k->ns_serial + 0.25 * per;
            }
            else if (per > 1.1 * k->ns_serial) {
                k->penalty = k->penalty == 0 ? 8 : (k->penalty < 4096 ? 2 * k->penalty : 4096);
                k->backoff = k->penalty;
            }
            else {
                k->penalty = 0;
            }
        }
        if (flags < 0) {
            for (int o = 0; o < nout; o++) Py_DECREF(outs[o]);
            PyErr_NoMemory();
            return NULL;
        }
        /* 6. floating-point exceptions, numpy's way */
        if (flags & (FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID)) {
            if (give_fpe(k->name, npy_fpe(flags)) < 0) {
                for (int o = 0; o < nout; o++) Py_DECREF(outs[o]);
                return NULL;
            }
        }
    }
    if (nout == 1) {
        return outs[0];
    }
    PyObject *tuple = PyTuple_New(nout);
    if (tuple == NULL) {
        for (int o = 0; o < nout; o++) Py_DECREF(outs[o]);
        return NULL;
    }
    for (int o = 0; o < nout; o++) PyTuple_SET_ITEM(tuple, o, outs[o]);
    return tuple;
}

/* -- prepare: resolve numpy's loops ---------------------------------------------------- */

static int
prepare(srcad_kernel *k, PyObject *fallback)
{
    if (k->abi != SRCAD_ABI) {
        PyErr_Format(PyExc_ImportError, "srcad kernel %s was built for runtime ABI %d, this "
                     "runtime is ABI %d", k->name, k->abi, SRCAD_ABI);
        return -1;
    }
    if (k->nin > SRCAD_MAXARGS || k->nout > SRCAD_MAXARGS || k->ndim > SRCAD_MAXDIMS ||
        k->ntmp > SRCAD_MAXARGS || k->ndim < 1) {
        PyErr_Format(PyExc_ImportError, "srcad kernel %s is too large for this runtime",
                     k->name);
        return -1;
    }
    if (k->nloop > 0 && k->loops == NULL) {
        k->loops = PyMem_Calloc((size_t)k->nloop, sizeof(srcad_loop));
        if (k->loops == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    if (k->nloop > 0) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        if (numpy == NULL) return -1;
        for (int j = 0; j < k->nloop; j++) {
            const srcad_loop_ref *ref = &k->loop_refs[j];
            PyObject *u = PyObject_GetAttrString(numpy, ref->ufunc);
            if (u == NULL) {
                Py_DECREF(numpy);
                return -1;
            }
            int ok = PyObject_TypeCheck(u, &PyUFunc_Type);
            PyUFuncObject *uf = (PyUFuncObject *)u;
            ok = ok && ref->index >= 0 && ref->index < uf->ntypes && uf->nargs == ref->nargs &&
                 uf->functions != NULL && uf->functions[ref->index] != NULL;
            for (int a = 0; ok && a < ref->nargs; a++) {
                ok = uf->types[ref->index * uf->nargs + a] == ref->types[a];
            }
            if (!ok) {
                Py_DECREF(u);
                Py_DECREF(numpy);
                PyErr_Format(PyExc_ImportError, "srcad kernel %s: numpy.%s has no inner loop "
                             "number %d of the expected types", k->name, ref->ufunc,
                             ref->index);
                return -1;
            }
            k->loops[j].fn = (srcad_loop_fn)uf->functions[ref->index];
            k->loops[j].data = uf->data != NULL ? uf->data[ref->index] : NULL;
            Py_DECREF(u);
        }
        Py_DECREF(numpy);
    }
    if (fallback != NULL && fallback != Py_None) {
        Py_INCREF(fallback);
        Py_XSETREF(k->fallback, fallback);
    }
    return 0;
}

static srcad_api api = {SRCAD_ABI, run, prepare};

/* -- the module ------------------------------------------------------------------------ */

static PyObject *
py_set_num_threads(PyObject *self, PyObject *arg)
{
    (void)self;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "the number of threads must be at least 1");
        return NULL;
    }
    int old = num_threads;
    num_threads = (int)n;
    return PyLong_FromLong(old);
}

static PyObject *
py_set_parallel_threshold(PyObject *self, PyObject *arg)
{
    (void)self;
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    npy_intp old = parallel_min;
    parallel_min = n < 0 ? 0 : (npy_intp)n;
    return PyLong_FromLongLong((long long)old);
}

static PyObject *
py_set_strict(PyObject *self, PyObject *arg)
{
    (void)self;
    int old = strict;
    strict = PyObject_IsTrue(arg);
    if (strict < 0) return NULL;
    return PyBool_FromLong(old);
}

static PyObject *
py_set_adaptive(PyObject *self, PyObject *arg)
{
    (void)self;
    int old = adaptive;
    adaptive = PyObject_IsTrue(arg);
    if (adaptive < 0) return NULL;
    return PyBool_FromLong(old);
}

static PyObject *
py_stats(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return Py_BuildValue("{s:K,s:K,s:K,s:s,s:i,s:n,s:i}", "calls", n_calls, "fallbacks",
                         n_fallbacks, "row_chunked", n_row_chunked, "last_fallback",
                         last_fallback, "num_threads",
                         num_threads, "parallel_threshold", (Py_ssize_t)parallel_min,
                         "abi", SRCAD_ABI);
}

static PyObject *
py_reset_stats(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    n_calls = n_fallbacks = n_row_chunked = 0;
    last_fallback[0] = 0;
    Py_RETURN_NONE;
}

/* row_reduce(a, what): np.sum / np.mean of a C-contiguous float32 or float64 array over its
 * last axis with keepdims, computed by the header's row reductions (the ones row kernels
 * use), so that tests can hold them to numpy bit for bit */
static PyObject *
py_row_reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyArray_CheckExact(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "row_reduce(a: ndarray, what: 'sum' | 'mean')");
        return NULL;
    }
    PyArrayObject *A = (PyArrayObject *)args[0];
    int mean = PyUnicode_CompareWithASCIIString(args[1], "mean") == 0;
    if (!mean && PyUnicode_CompareWithASCIIString(args[1], "sum") != 0) {
        PyErr_SetString(PyExc_ValueError, "row_reduce: what must be 'sum' or 'mean'");
        return NULL;
    }
    int type = PyArray_TYPE(A), nd = PyArray_NDIM(A);
    if ((type != NPY_FLOAT && type != NPY_DOUBLE) || nd < 1 || nd > MAXD ||
        !PyArray_IS_C_CONTIGUOUS(A) || !PyArray_ISALIGNED(A) || !PyArray_ISNOTSWAPPED(A) ||
        PyArray_DIM(A, nd - 1) == 0) {
        PyErr_SetString(PyExc_TypeError, "row_reduce: a C-contiguous float32 or float64 "
                        "array with a non-empty last axis");
        return NULL;
    }
    npy_intp shape[MAXD];
    for (int d = 0; d < nd; d++) shape[d] = PyArray_DIM(A, d);
    const npy_intp L = shape[nd - 1], rows = PyArray_SIZE(A) / L;
    shape[nd - 1] = 1;
    PyObject *out = PyArray_SimpleNew(nd, shape, type);
    if (out == NULL) return NULL;
    char *src = PyArray_BYTES(A), *dst = PyArray_BYTES((PyArrayObject *)out);
    for (npy_intp r = 0; r < rows; r++) {
        if (type == NPY_FLOAT) {
            const float *row = (const float *)src + r * L;
            ((float *)dst)[r] = mean ? srcad_row_mean_float(row, L) : srcad_row_sum_float(row, L);
        }
        else {
            const double *row = (const double *)src + r * L;
            ((double *)dst)[r] = mean ? srcad_row_mean_double(row, L)
                                      : srcad_row_sum_double(row, L);
        }
    }
    return out;
}

/* (after srcad_gemm.h, the team, and give_fpe: numpy's reporting of floating-point errors) */
#include "srcad_colsum.h"
#include "srcad_rowgrad.h"

static PyMethodDef methods[] = {
    {"set_num_threads", py_set_num_threads, METH_O,
     "set_num_threads(n) -> previous: threads a kernel uses above the size threshold"},
    {"set_parallel_threshold", py_set_parallel_threshold, METH_O,
     "set_parallel_threshold(elements) -> previous: below it a kernel runs on one thread"},
    {"set_strict", py_set_strict, METH_O,
     "set_strict(flag) -> previous: raise TypeError instead of running the fallback"},
    {"set_adaptive", py_set_adaptive, METH_O,
     "set_adaptive(flag) -> previous: keep using threads only where they have paid off"},
    {"stats", py_stats, METH_NOARGS, "calls, fallbacks, the last fallback's reason, settings"},
    {"reset_stats", py_reset_stats, METH_NOARGS, "zero the counters"},
    {"row_reduce", (PyCFunction)(void (*)(void))py_row_reduce, METH_FASTCALL,
     "row_reduce(a, 'sum' | 'mean'): the row kernels' reductions over the last axis"},
    SRCAD_POOL_METHODS
    SRCAD_SCATTER_METHODS
    SRCAD_OPTIM_METHODS
    SRCAD_ROWGRAD_METHODS
    SRCAD_GUARDS_METHODS
    SRCAD_THREADS_METHODS
    SRCAD_GEMM_METHODS
    SRCAD_COLSUM_METHODS
    {NULL, NULL, 0, NULL},
};

#ifndef SRCAD_DRIVER_NAME
#define SRCAD_DRIVER_NAME _kernels
#endif
static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, SRCAD_STR(SRCAD_DRIVER_NAME),
    "srcad's fused-kernel runtime (kernels_c/srcad_driver.c)", -1, methods,
};

PyMODINIT_FUNC
SRCAD_CAT(PyInit_, SRCAD_DRIVER_NAME)(void)
{
    import_array();
    import_umath();
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
    num_threads = default_threads();
    threads_init();
    const char *env = getenv("SRCAD_PARALLEL_THRESHOLD");
    if (env != NULL && *env) parallel_min = (npy_intp)atoll(env);
    PyObject *cap = PyCapsule_New(&api, "srcad._kernels.api", NULL);
    if (cap == NULL || PyModule_AddObject(m, "api", cap) < 0) {
        Py_XDECREF(cap);
        Py_DECREF(m);
        return NULL;
    }
    if (pool_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "ABI", SRCAD_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#ifdef SRCAD_SOURCE_SHA
    /* the sha256 of kernels_c/ this copy was built from: srcad.build rebuilds a stale one */
    if (PyModule_AddStringConstant(m, "SOURCE_SHA", SRCAD_SOURCE_SHA) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
