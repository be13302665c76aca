/*
 * srcad_kernels.h -- the contract between srcad's generated kernels and its C runtime.
 *
 * A generated kernel module (one per transformed function, written by srcad/lower/cgen.py)
 * includes this header and nothing from numpy. For each fused chain it defines
 *   - a *block function*: the chain's arithmetic over `n` contiguous elements, one C statement
 *     per fused op, temporaries named after the Python ones;
 *   - a `srcad_kernel` descriptor: what its arguments are (arrays, 0-d scalars, Python
 *     numbers), what it returns, which numpy inner loops it calls, how its statements depend
 *     on each other (numpy's memory-layout rule for results needs that);
 *   - a METH_FASTCALL entry point that hands the descriptor and the arguments to
 *     `srcad_api.run`.
 * The runtime (srcad_driver.c, the extension `srcad._kernels`) does everything else:
 * argument checking, numpy broadcasting over any number of dimensions and any strides
 * (a contiguous fast path, stride-0 operands, a general strided path), output allocation
 * through numpy (in numpy's own memory order) or writing into a given buffer, calling
 * numpy's own inner loops for transcendentals, srcad's threads above a size threshold, and
 * numpy's floating-point error reporting. Arguments that do not match what the kernel was
 * built for are handed to the kernel's *fallback*: the same statements as plain Python.
 *
 * The layout of these structs is versioned by SRCAD_ABI: the runtime refuses a kernel
 * module built against another version (and the kernel cache key contains this file's
 * hash, so such a module is never looked up in the first place).
 */
#ifndef SRCAD_KERNELS_H
#define SRCAD_KERNELS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define SRCAD_ABI 3

/* elements per block when a kernel needs scratch space (a numpy loop call between two
 * stretches of inline arithmetic, a gathered strided operand, an output written back) */
#define SRCAD_BLOCK 1024

/* the most arguments, outputs and dimensions one kernel may have */
#define SRCAD_MAXARGS 64
#define SRCAD_MAXDIMS 32

typedef unsigned char srcad_bool; /* numpy's bool: one byte, 0 or 1 */

/* A selection `c ? a : b` of two floating values already computed, without a branch: the
 * bits of the one chosen (NaN payloads and signed zeros kept). The generated code writes
 * np.where, maximum, clip, ... this way (srcad/lower/cexpr.py) because a C conditional lets
 * gcc move the computation of `a` into the branch, and under -ftrapping-math it then does
 * not vectorise the loop (a masked score, `np.where(causal, s * scale, -1e9)`, ran one
 * element at a time). Both values are computed in any case, as numpy computes both
 * arrays before np.where picks. */
static inline float srcad_select_float(int c, float a, float b)
{
    uint32_t ia, ib, r;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    const uint32_t m = (uint32_t)0 - (uint32_t)(c != 0);
    r = (ia & m) | (ib & ~m);
    float o;
    memcpy(&o, &r, sizeof o);
    return o;
}
static inline double srcad_select_double(int c, double a, double b)
{
    uint64_t ia, ib, r;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    const uint64_t m = (uint64_t)0 - (uint64_t)(c != 0);
    r = (ia & m) | (ib & ~m);
    double o;
    memcpy(&o, &r, sizeof o);
    return o;
}

#define SRCAD_STR2(x) #x
#define SRCAD_STR(x) SRCAD_STR2(x)
#define SRCAD_CAT2(a, b) a##b
#define SRCAD_CAT(a, b) SRCAD_CAT2(a, b)

/* A numpy inner loop: PyUFuncGenericFunction, without numpy's headers. */
typedef void (*srcad_loop_fn)(char **args, const intptr_t *dimensions, const intptr_t *steps,
                              void *data);

typedef struct {
    srcad_loop_fn fn;
    void *data;
} srcad_loop;

/* A numpy inner loop a kernel needs: `numpy.<ufunc>`'s loop number `index`, whose operand
 * types (numpy type numbers, inputs then outputs) must be `types` (checked at load time). */
typedef struct {
    const char *ufunc;
    int index;
    int nargs;
    const int *types;
} srcad_loop_ref;

/* p: one pointer per argument then per output, each to `n` contiguous elements (a 0-d or
 * Python-number argument: to its one value); loops: the resolved numpy loops; tmp: scratch
 * arrays of SRCAD_BLOCK elements for values that cross a numpy loop call; raw, step: each
 * argument's own memory for this block and its stride in bytes (0 for a broadcast axis).
 * A numpy loop is called on an argument's own memory, with its own stride, because numpy's
 * SIMD loops fall back to other code for some strides (a reversed array's -4), which can
 * round differently: numpy's bits for that layout are only had that way. */
typedef void (*srcad_block_fn)(char *const *p, intptr_t n, const srcad_loop *loops,
                               char *const *tmp, char *const *raw, const intptr_t *step);

/* A row kernel's chunk function: nr (<= SRCAD_ROWS) consecutive rows of length n; p: each
 * argument's and output's first row (a 0-d or number argument: its value), rs: the bytes
 * from one row to the next (0: the same value for every row), tmp: scratch of nr * n
 * elements each (srcad/lower/cgen_rows.py `rows_text`). */
typedef void (*srcad_rows_fn)(char *const *p, const intptr_t *rs, intptr_t nr, intptr_t n,
                              const srcad_loop *loops, char *const *tmp);

/* the most rows a chunk function is given at once (it keeps SRCAD_ROWS row values each) */
#define SRCAD_ROWS 16

enum {
    SRCAD_ARRAY = 0,  /* an ndarray of exactly `type`, broadcast into the kernel's shape */
    SRCAD_SCALAR = 1, /* a 0-d ndarray or numpy scalar of exactly `type` (numpy: strong) */
    SRCAD_NUMBER = 2, /* a Python int, float or bool (numpy: weak); read as a C double */
    SRCAD_SCALAR_OR_NUMBER = 3 /* SRCAD_SCALAR, or a Python number where numpy would compute
                                * the same either way (converted to `type`, as numpy would) */
};

typedef struct {
    const char *name; /* the Python name or expression, for messages */
    int kind;
    int type; /* numpy type number (for SRCAD_NUMBER: NPY_DOUBLE, the slot's type) */
} srcad_arg;

typedef struct {
    const char *name;
    int type;  /* numpy type number of the result */
    int inout; /* -1: a new array; else the argument whose array the kernel writes into */
    int stmt;  /* the statement whose value this is */
} srcad_out;

typedef struct srcad_kernel {
    int abi;
    const char *name;
    const char *where; /* "file.py:func L12-L14", for messages */
    int ndim;          /* the kernel's iteration shape has this many dimensions */
    int nin;
    const srcad_arg *in;
    int nout;
    const srcad_out *out;
    /* statements, for numpy's layout rule and the shape check: for statement j,
     * stmt_ops[stmt_start[j] .. stmt_start[j+1]) are its operands: k >= 0 the argument k,
     * k < 0 the statement -k-1 (only array-valued operands are listed) */
    int nstmt;
    const int *stmt_start;
    const int *stmt_ops;
    int ntmp;
    const int *tmp_itemsize;
    int nloop;
    const srcad_loop_ref *loop_refs;
    srcad_block_fn block;
    /* the arguments a numpy loop call reads in their own memory (bit k: argument k) */
    unsigned long long raw_mask;
    /* filled at load time by srcad_api.prepare */
    srcad_loop *loops;
    PyObject *fallback; /* a Python function of the same arguments (a new reference) */
    /* the runtime's own bookkeeping (zero-initialised): whether threads pay off */
    double ns_serial;   /* seconds per element of recent one-thread runs (0: none yet) */
    int backoff;        /* run this many more calls on one thread */
    int penalty;        /* the next backoff, doubled each time threads lose */
    /* a row kernel (a chain with a reduction over the last axis: srcad/lower/cgen_rows.py),
     * given by designated initialisers; 0 / NULL for an elementwise kernel. The runtime
     * (`run_rows`) calls `block` once per row, n = the row's length, each argument and
     * output pointing at its row (one value for those in row_in / row_out, whose last axis
     * is 1), and sizes `tmp` to one row. It runs only arguments of exactly their planned
     * shape (in_shape: ndim entries per argument, -1 for an axis it lacks) in C order
     * (stride 0 aside: numpy's results are then in C order too, and a row of one is summed
     * pairwise, as the block does) and falls back otherwise. */
    int rowwise;
    const intptr_t *shape; /* the planned full shape (ndim entries) */
    const intptr_t *in_shape;
    unsigned long long row_in;
    unsigned long long row_out;
    unsigned long long dense_in; /* bit k: argument k is reduced directly or read by numpy's
                                  * own loop: its rows must be of adjacent elements */
    /* the same rows a chunk at a time (NULL: one row per `block` call); the runtime uses it
     * when every operand's rows are evenly spaced and none is gathered or written through
     * scratch */
    srcad_rows_fn block_rows;
} srcad_kernel;

typedef struct {
    int abi;
    /* run kernel k on the entry point's arguments: the result (a tuple when nout > 1).
     * kwnames (METH_FASTCALL | METH_KEYWORDS): NULL, or ("out",) with args[nargs] the
     * arrays to write the results into (a tuple, or one array for one result) */
    PyObject *(*run)(srcad_kernel *k, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);
    /* resolve k's numpy loops and take a reference to its fallback: 0, or -1 with an
     * exception set */
    int (*prepare)(srcad_kernel *k, PyObject *fallback);
} srcad_api;

/* Call numpy's inner loop `l` on n contiguous elements: one input, one output. */
static inline void srcad_call_1_1(const srcad_loop *l, const void *x, void *y, intptr_t n,
                                  intptr_t sx, intptr_t sy)
{
    char *args[2] = {(char *)x, (char *)y};
    const intptr_t steps[2] = {sx, sy};
    l->fn(args, &n, steps, l->data);
}

/* Call numpy's binary inner loop `l` in reduce mode, as a reduction over a contiguous row
 * calls it: *acc = l(*acc, x[i]) for the n values x[0..n-1] (stride sx), acc read and
 * written in place with stride 0 (numpy's loops recognise the call and reduce with SIMD). */
static inline void srcad_reduce_2_1(const srcad_loop *l, void *acc, const void *x, intptr_t n,
                                    intptr_t sx)
{
    char *args[3] = {(char *)acc, (char *)x, (char *)acc};
    const intptr_t steps[3] = {0, sx, 0};
    if (n > 0) l->fn(args, &n, steps, l->data);
}

/* Call numpy's inner loop `l` on n contiguous elements: two inputs, one output. A stride of
 * 0 passes a one-value operand (an argument that is a number or a 0-d array). */
static inline void srcad_call_2_1(const srcad_loop *l, const void *x, const void *y, void *z,
                                  intptr_t n, intptr_t sx, intptr_t sy, intptr_t sz)
{
    char *args[3] = {(char *)x, (char *)y, (char *)z};
    const intptr_t steps[3] = {sx, sy, sz};
    l->fn(args, &n, steps, l->data);
}

/* -- numpy's float sum over a contiguous row, bit for bit ---------------------------------
 *
 * np.add.reduce over a contiguous axis starts from the identity +0.0 and adds the pairwise
 * sum of the row to it (so a row of -0.0 sums to +0.0). The pairwise sum, as numpy's float
 * loops compute it (our restatement, tested bit for bit against np.sum and np.mean in
 * tests/test_fuse_rows_reduce.py):
 *   - fewer than 8 values: one running sum from 0, left to right;
 *   - 8 to 128 values: eight running sums, the k-th starting at value k and taking every
 *     eighth value after it, over the largest multiple of 8; then combined as
 *     ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)); then the remaining values added
 *     one by one;
 *   - more: split at half the count rounded down to a multiple of 8, each half summed this
 *     way, the two results added.
 * Every operation is rounded in the row's own type (float stays float). mean is this sum
 * divided by the count converted to the row's type, as numpy's mean does. */
/* The eight running sums as one value: with GCC's vector extension (gcc, clang) a vector of
 * eight, added lane by lane -- the same eight IEEE additions in the same order as eight
 * scalars, kept in registers (the scalar array went through the stack, and the row's sum
 * waited on it: 23 -> 7 ns a row of 64 floats, 42 -> 12 ns a row of 128, on Zen 3) --
 * else an array of eight. */
#if defined(__GNUC__)
typedef float srcad_eight_float __attribute__((vector_size(8 * sizeof(float))));
typedef double srcad_eight_double __attribute__((vector_size(8 * sizeof(double))));
#define SRCAD_EIGHT(T) SRCAD_CAT(srcad_eight_, T)
#define SRCAD_EIGHT_LOAD(r, p) memcpy(&(r), (p), sizeof(r))
#define SRCAD_EIGHT_ADD(r, x) ((r) += (x))
#define SRCAD_AT(r, k) ((r)[k])
#else
typedef struct { float v[8]; } srcad_eight_float;
typedef struct { double v[8]; } srcad_eight_double;
#define SRCAD_EIGHT(T) SRCAD_CAT(srcad_eight_, T)
#define SRCAD_EIGHT_LOAD(r, p) memcpy((r).v, (p), sizeof((r).v))
#define SRCAD_EIGHT_ADD(r, x) for (int k_ = 0; k_ < 8; k_++) (r).v[k_] += (x).v[k_]
#define SRCAD_AT(r, k) ((r).v[k])
#endif

#define SRCAD_PAIRWISE(T, NAME)                                                              \
    static T NAME(const T *a, intptr_t n)                                                    \
    {                                                                                        \
        if (n < 8) {                                                                         \
            T s = (T)0;                                                                      \
            for (intptr_t i = 0; i < n; i++) s += a[i];                                      \
            return s;                                                                        \
        }                                                                                    \
        if (n <= 128) {                                                                      \
            SRCAD_EIGHT(T) r, x;                                                             \
            SRCAD_EIGHT_LOAD(r, a);                                                          \
            intptr_t i = 8;                                                                  \
            for (; i < n - (n % 8); i += 8) {                                                \
                SRCAD_EIGHT_LOAD(x, a + i);                                                  \
                SRCAD_EIGHT_ADD(r, x);                                                       \
            }                                                                                \
            T s = ((SRCAD_AT(r, 0) + SRCAD_AT(r, 1)) + (SRCAD_AT(r, 2) + SRCAD_AT(r, 3)))    \
                + ((SRCAD_AT(r, 4) + SRCAD_AT(r, 5)) + (SRCAD_AT(r, 6) + SRCAD_AT(r, 7)));   \
            for (; i < n; i++) s += a[i];                                                    \
            return s;                                                                        \
        }                                                                                    \
        intptr_t half = n / 2;                                                               \
        half -= half % 8;                                                                    \
        return NAME(a, half) + NAME(a + half, n - half);                                     \
    }
/* A row's max or min, bit for bit np.max / np.min over a contiguous last axis. Where the
 * row has no NaN and its extremum is not zero, the extremum's bits are the same whichever
 * order the row is scanned in (equal nonzero floats are the same bits), so a plain scan in
 * eight lanes finds them. Otherwise -- a NaN (which NaN comes out), or a tie that may mix
 * -0.0 and +0.0 (which sign comes out) -- numpy's own loop `l` decides, called as np.max
 * calls it: the first value, then the loop in reduce mode over the rest. That loop is also
 * what long rows take (from 256 values its SIMD pays for its ~50 ns of setup per call). */
#define SRCAD_ROW_EXTREMUM(T, NAME, BEATS)                                                   \
    static inline T NAME(const srcad_loop *l, const T *a, intptr_t n)                        \
    {                                                                                        \
        T r[8];                                                                              \
        int bad = n >= 256;                                                                  \
        for (int k = 0; k < 8; k++) r[k] = a[0];                                             \
        intptr_t i = bad ? n : 0;                                                            \
        for (; i + 8 <= n; i += 8) {                                                         \
            for (int k = 0; k < 8; k++) {                                                    \
                const T x = a[i + k];                                                        \
                r[k] = BEATS(x, r[k]) ? x : r[k];                                            \
                bad |= x != x;                                                               \
            }                                                                                \
        }                                                                                    \
        for (; i < n; i++) {                                                                 \
            r[0] = BEATS(a[i], r[0]) ? a[i] : r[0];                                          \
            bad |= a[i] != a[i];                                                             \
        }                                                                                    \
        T e = r[0];                                                                          \
        for (int k = 1; k < 8; k++) e = BEATS(r[k], e) ? r[k] : e;                           \
        if (!bad && e != (T)0) return e;                                                     \
        T acc = a[0];                                                                        \
        srcad_reduce_2_1(l, &acc, a + 1, n - 1, (intptr_t)sizeof(T));                        \
        return acc;                                                                          \
    }
/* For the runtime's own loops (srcad_optim.h, srcad_rowgrad.h). The installed runtime is
 * built for any CPU of the architecture (no -march): such a loop is compiled for AVX-512 and
 * AVX2 too and the loader picks the best the CPU has (the same IEEE operations in every
 * version: vector lanes round as scalars do, and -ffp-contract=off holds in each). errno is
 * not needed from sqrt, which lets it vectorise. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SRCAD_RUNTIME_LOOP                                                                   \
    __attribute__((optimize("no-math-errno"),                                                 \
                   target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
#define SRCAD_RUNTIME_LOOP __attribute__((optimize("no-math-errno")))
#else
#define SRCAD_RUNTIME_LOOP
#endif

#define SRCAD_GREATER(x, y) ((x) > (y))
#define SRCAD_LESS(x, y) ((x) < (y))

SRCAD_PAIRWISE(float, srcad_pairwise_sum_float)
SRCAD_PAIRWISE(double, srcad_pairwise_sum_double)
SRCAD_ROW_EXTREMUM(float, srcad_row_max_float, SRCAD_GREATER)
SRCAD_ROW_EXTREMUM(double, srcad_row_max_double, SRCAD_GREATER)
SRCAD_ROW_EXTREMUM(float, srcad_row_min_float, SRCAD_LESS)
SRCAD_ROW_EXTREMUM(double, srcad_row_min_double, SRCAD_LESS)
#undef SRCAD_PAIRWISE

/* np.sum(row) and np.mean(row) of a contiguous row of n values */
static inline float srcad_row_sum_float(const float *a, intptr_t n)
{
    return 0.0f + srcad_pairwise_sum_float(a, n);
}
static inline double srcad_row_sum_double(const double *a, intptr_t n)
{
    return 0.0 + srcad_pairwise_sum_double(a, n);
}
static inline float srcad_row_mean_float(const float *a, intptr_t n)
{
    return srcad_row_sum_float(a, n) / (float)n;
}
static inline double srcad_row_mean_double(const double *a, intptr_t n)
{
    return srcad_row_sum_double(a, n) / (double)n;
}

#endif /* SRCAD_KERNELS_H */
