/*
 * srcad_gemm.h -- gemm(a, b): numpy's `a @ b` for float32/float64 matrices, bit for bit
 * numpy's product with its OpenBLAS at one thread, computed by srcad's own threads pulling
 * blocks of the product's rows (or whole matrices of a stack) one at a time, each one
 * single-threaded cblas GEMM call. Included by srcad_driver.c alone, after srcad_threads.h.
 *
 * Why (issue 25): on a CPU where the BLAS's products change with its thread count (OpenBLAS
 * 0.3.31's Haswell SGEMM on a Zen 3: srcad/build/blas.py threads_change_values) srcad runs
 * its calls with the BLAS at one thread (srcad_threads.h, `threads_pin`), so that every call
 * and every mode gets the same bits whatever the load. The parallelism comes back here, and
 * dynamically: a static two-thread split waits for the thread whose core another process
 * holds (the block's GEMMs took 2.4x their quiet time with one core of two busy); threads
 * that pull the next block when they are done let the thread on the free core do most of
 * the work.
 *
 * Why the bits are numpy's: numpy's matmul of two matrices is one cblas_?gemm call (trans
 * flags and leading dimensions read from the strides, the result C-contiguous); a stack is
 * one such call per matrix, in a loop. One call on a block of rows is bitwise those rows of
 * the call on the whole when the block starts at a multiple of the kernel's row granule (the
 * micro-kernel's column unroll of the column-major product OpenBLAS computes: 12 for the
 * Haswell SGEMM, 2 for its DGEMM, 12 for the SkylakeX DGEMM; rows of an edge tile are summed
 * differently), the last block ends at the last row, and every block stays on the kernel the
 * whole takes: at or above the BLAS's small-product line (the block floor: 0 on the Haswell
 * kernels; on the SkylakeX ones m*n*k <= 1e6 goes to small-matrix kernels, so blocks have
 * rows*k*n >= 2^20). Granule and floor are measured, not assumed (srcad/build/blas.py
 * `row_split`), and handed over with the functions. A block under the floor, or of fewer
 * than GEMM_MIN_TAIL rows, is never made: the tail goes with the last block.
 *
 * Handled: a and b exact ndarrays of one dtype (float32, float64), native byte order,
 * aligned; both 2-D, or a stack (ndim >= 3) times a matrix, or two stacks of the same leading
 * shape; each matrix with one unit stride and the other at least its extent (what numpy
 * hands to cblas); at least 2 rows, 2 columns and 2 summed; not a matrix times its own
 * transpose (numpy's SYRK); a stack's leading axes in C order (numpy then lays the result
 * out C-contiguous). Anything else is numpy's own `a @ b` (PyNumber_MatrixMultiply), as is
 * everything before srcad.build configures the functions.
 */
#ifndef SRCAD_GEMM_H
#define SRCAD_GEMM_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#define GEMM_ROW_MAJOR 101
#define GEMM_NO_TRANS 111
#define GEMM_TRANS 112
#define GEMM_BLOCKS 2    /* blocks of rows a thread, about, to pull dynamically */
#define GEMM_MIN_ROWS 64 /* rows a block, at least (then rounded up to the granule) */
/* rows the last block has at least: OpenBLAS may hand an M=1 GEMM to GEMV, and MKL 2026.2's
 * SGEMM and DGEMM on a Zen 3 sum blocks of 1-3 rows in another order than the same rows of a
 * larger call (4 and more agree; srcad/build/blas.py `_blocks_agree` probes a tail of this
 * many rows) -- a shorter tail goes with the block before it */
#define GEMM_MIN_TAIL 4

typedef void (*gemm_s_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                          int64_t, const float *, int64_t, float, float *, int64_t);
typedef void (*gemm_d_fn)(int, int, int, int64_t, int64_t, int64_t, double, const double *,
                          int64_t, const double *, int64_t, double, double *, int64_t);

static gemm_s_fn gemm_s = NULL;
static gemm_d_fn gemm_d = NULL;
static npy_intp gemm_granule[2] = {0, 0}; /* float32, float64: rows a block starts at */
static npy_intp gemm_min_work = (npy_intp)1 << 21; /* m*k*n below this: one call */
/* float32, float64: rows*k*n a block of a split product has at least (0: no floor). A BLAS may
 * hand small products to other kernels, summed in another order (OpenBLAS's SkylakeX: its
 * small-matrix kernels at m*n*k <= 1e6, its direct SGEMM below 28*512*512 at one thread), so
 * a block that falls under such a line would not be bitwise those rows of the whole; the
 * floor is measured (srcad/build/blas.py `row_split`) */
static npy_intp gemm_min_block[2] = {0, 0};
static int gemm_blocks_per_thread = GEMM_BLOCKS;
static unsigned long long gemm_calls = 0, gemm_split = 0, gemm_fellback = 0;

typedef struct {
    int trans;    /* GEMM_NO_TRANS / GEMM_TRANS */
    npy_intp ld;  /* leading dimension, in elements */
    npy_intp row; /* elements from one row of the operand to the next */
} gemm_operand;

/* the operand as numpy's matmul hands it to cblas (row-major), from its last two strides;
 * 0: not blasable */
static int
gemm_operand_of(npy_intp rows, npy_intp cols, npy_intp s_row, npy_intp s_col, npy_intp size,
                gemm_operand *o)
{
    if (s_row % size != 0 || s_col % size != 0) return 0;
    npy_intp r = s_row / size, c = s_col / size;
    if (c == 1 && r >= cols && r > 0) {
        o->trans = GEMM_NO_TRANS;
        o->ld = r;
        o->row = r;
        return 1;
    }
    if (r == 1 && c >= rows && c > 0) {
        o->trans = GEMM_TRANS;
        o->ld = c;
        o->row = 1;
        return 1;
    }
    return 0;
}

/* one block of rows [r0, r1) of one matrix of the product */
static void
gemm_block(int dt, const char *a, const gemm_operand *oa, const char *b,
           const gemm_operand *ob, char *c, npy_intp r0, npy_intp r1, npy_intp k, npy_intp n)
{
    npy_intp size = dt == 0 ? 4 : 8;
    const char *ar = a + r0 * oa->row * size;
    char *cr = c + r0 * n * size;
    if (dt == 0)
        gemm_s(GEMM_ROW_MAJOR, oa->trans, ob->trans, r1 - r0, n, k, 1.0f, (const float *)ar,
               oa->ld, (const float *)b, ob->ld, 0.0f, (float *)cr, n);
    else
        gemm_d(GEMM_ROW_MAJOR, oa->trans, ob->trans, r1 - r0, n, k, 1.0, (const double *)ar,
               oa->ld, (const double *)b, ob->ld, 0.0, (double *)cr, n);
}

/* leading axes [0, lead) of `x` in C order (strides not increasing, none negative)? */
static int
gemm_lead_c_order(PyArrayObject *x, int lead)
{
    for (int d = 0; d < lead; d++) {
        if (PyArray_STRIDE(x, d) < 0) return 0;
        if (d + 1 < lead && PyArray_DIM(x, d + 1) > 1 && PyArray_DIM(x, d) > 1 &&
            PyArray_STRIDE(x, d) < PyArray_STRIDE(x, d + 1))
            return 0;
    }
    return 1;
}

/* byte offset of item `i` (C order over the leading axes) in `x` */
static npy_intp
gemm_item_offset(PyArrayObject *x, int lead, npy_intp i)
{
    npy_intp off = 0;
    for (int d = lead - 1; d >= 0; d--) {
        npy_intp n = PyArray_DIM(x, d);
        off += (i % n) * PyArray_STRIDE(x, d);
        i /= n;
    }
    return off;
}


/* ---- the team: srcad's own threads, for gemm's blocks and the kernels' shares -------------
 * srcad runs no OpenMP. libgomp is one library per process, shared by soname (libgomp.so.1)
 * with every other user of GNU OpenMP there -- torch's wheel links it too -- and whoever loads
 * it first fixes its wait policy for all: srcad, which loaded it with its workers asleep
 * between regions (OMP_WAIT_POLICY=PASSIVE: spinning workers took the core OpenBLAS's
 * threads needed), made torch's threaded ops 1.6-2.3x slower in any process that imported
 * srcad first (torch.tanh on 2M floats 0.36 -> 0.57-0.83 ms; REPORT.md, issue 25, "srcad
 * and other libraries' threads"), and waking a sleeping worker cost ~30 us on these VMs for
 * each of the ~28 products and ~10 kernels of the small Transformer block's step (a region
 * of two threads with a sleeping worker: 30 us; with a spinning one: 1.1 us). The team's
 * helpers spin for the next product only for TEAM_HOT_NS after one that ran inside a call
 * where the BLAS is pinned (so no OpenBLAS thread wants their core: srcad_threads.h runs it
 * at one thread there) and the per-call choice found more than one core free (no other
 * process wants it either); else they sleep on a condition variable. One product or kernel
 * at a time uses the team; another at the same time (on another Python thread) runs on its
 * own thread. A product wanting fewer threads than the team has (the per-call choice lowered
 * them) is run by that many: the other helpers leave it at once (`team_cap`).
 * Values: every block or share is the same code on the same rows whichever thread runs it. */
#define TEAM_MAX 63             /* helpers, at most */
/* a helper spins this long after a hot product (or TEAM_AFTER_NS after the call returns:
 * srcad_threads.h), then sleeps: longer than the Python between two products of a call, so
 * that a helper stays awake, on its own core, for the whole call. At 0.2 ms, once the process
 * had been idle ~20 ms (its caches and the owner's Python cold), the gaps between products
 * outgrew it, and the small block's step woke its helper -- onto the owner's CPU, see
 * team_move_off -- again and again: 5.9 ms a step against 3.9 ms at 5 ms (REPORT.md, "A
 * helper on its owner's core") */
#define TEAM_HOT_NS 5000000

typedef void (*team_fn)(void *);

static pthread_mutex_t team_mu = PTHREAD_MUTEX_INITIALIZER;   /* guards sleeping */
static pthread_cond_t team_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t team_busy = PTHREAD_MUTEX_INITIALIZER; /* one product at a time */
static unsigned long team_epoch = 0; /* (atomic) bumped for each product */
static team_fn team_task = NULL;
static void *team_arg = NULL;
/* (atomic) helpers inside the current product, with TEAM_CLOSED set once its owner has run
 * out of work: a helper that comes later leaves without touching it, so the owner waits only
 * for helpers that joined -- not for one another process's thread keeps off its core, which
 * the owner would otherwise wait a scheduler's time slice for, product after product */
static long long team_state = (1LL << 40);
#define TEAM_CLOSED (1LL << 40)
static int team_started = 0;         /* helpers running */
static int team_cap = 0;             /* (atomic) helpers the current product takes, at most */
static unsigned long long team_runs = 0;
/* (atomic) the CPU the owner of the current product runs on (-1: not known), and how often a
 * helper found itself on it and moved off (team_move_off) */
static int team_owner_cpu = -1;
static unsigned long long team_moves = 0;
static int team_forked = 0;

static inline void
team_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A helper that finds itself on the CPU its product's owner runs on moves to another CPU of
 * the process's mask, and keeps off the owner's CPU while it stays awake (spinning for the
 * next product); it gets the whole mask back before it sleeps. Why: after the process has
 * been idle ~20 ms (a training loop's data loading between steps; another library's calls),
 * Linux wakes a sleeping helper on the CPU of the thread that woke it, where the owner is
 * already working, and moves threads between the two CPUs at its load balances; the two
 * then shared one core for much of the call, and the small Transformer block's step took
 * 7.0 ms against 5.9 ms on one thread and 4.1 ms with calls 1-5 ms apart (REPORT.md, "A
 * helper on its owner's core"). Values do not depend on it: every block or share is the same
 * code on the same rows, whichever thread and CPU run it. */
typedef struct {
    int off;         /* kept off a CPU now: `mask` is the mask to restore */
    cpu_set_t mask;
} team_place;

static void
team_move_off(team_place *pl, int cpu)
{
#ifdef __linux__
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu) return;
    cpu_set_t others;
    if (!pl->off && sched_getaffinity(0, sizeof pl->mask, &pl->mask) != 0) return;
    others = pl->mask;
    CPU_CLR(cpu, &others);
    if (CPU_COUNT(&others) == 0) return;
    if (sched_setaffinity(0, sizeof others, &others) == 0) {
        pl->off = 1;
        __atomic_add_fetch(&team_moves, 1, __ATOMIC_RELAXED);
    }
#else
    (void)pl;
    (void)cpu;
#endif
}

/* the helper's whole mask back (before it sleeps) */
static void
team_place_restore(team_place *pl)
{
#ifdef __linux__
    if (pl->off) sched_setaffinity(0, sizeof pl->mask, &pl->mask);
#endif
    pl->off = 0;
}

/* 1 on the team's helpers: they take a product's work from its end, its owner from its start
 * (team_claim) */
static _Thread_local int team_on_helper = 0;

/* The next piece of `total` (0 .. total-1) for the calling thread, or -1 when every piece is
 * taken: the owner takes them from the start, helpers from the end, so that with two threads
 * the owner runs the first half and its helper the second -- the halves each ran of the
 * kernel before, whose results are in that core's cache (pulled one at a time from one
 * counter, the two interleaved: a block of a product fed by a kernel came half from the
 * other core). Every piece is the same code on the same rows whichever thread runs it. */
static inline long long
team_claim(long long *claimed, long long *front, long long *back, long long total)
{
    if (__atomic_fetch_add(claimed, 1, __ATOMIC_RELAXED) >= total) return -1;
    if (team_on_helper) return total - 1 - __atomic_fetch_add(back, 1, __ATOMIC_RELAXED);
    return __atomic_fetch_add(front, 1, __ATOMIC_RELAXED);
}

static void *
team_helper(void *p)
{
    team_on_helper = 1;
    unsigned long seen = (unsigned long)(uintptr_t)p; /* the epoch when it was made */
    team_place place;
    place.off = 0;
#ifdef __linux__
    pthread_setname_np(pthread_self(), "srcad-team"); /* (top -H, /proc/<pid>/task/<tid>/comm) */
#endif
    for (;;) {
        unsigned long e;
        int n = 0;
        while ((e = __atomic_load_n(&team_epoch, __ATOMIC_ACQUIRE)) == seen) {
            if ((++n & 63) == 0) {
                if (team_now() >= __atomic_load_n(&team_hot_until, __ATOMIC_RELAXED)) break;
                if (__atomic_load_n(&team_outside, __ATOMIC_RELAXED)) sched_yield();
            }
            team_pause();
        }
        if (e == seen) {
            team_place_restore(&place);
            pthread_mutex_lock(&team_mu);
            while ((e = __atomic_load_n(&team_epoch, __ATOMIC_ACQUIRE)) == seen)
                pthread_cond_wait(&team_cv, &team_mu);
            pthread_mutex_unlock(&team_mu);
        }
        /* join the product now open, if any (perhaps a later one than epoch `e`: its task
         * and argument were written before it was opened); the owner waits for joined helpers
         * only, and every task pulls its work from counters, so a helper that finds none
         * left, or joins one product twice, does nothing */
        seen = e;
        team_move_off(&place, __atomic_load_n(&team_owner_cpu, __ATOMIC_RELAXED));
        /* (helpers inside before this one: beyond the product's cap, it leaves at once) */
        long long before = __atomic_fetch_add(&team_state, 1, __ATOMIC_ACQ_REL);
        if (!(before & TEAM_CLOSED) &&
            (before & ~TEAM_CLOSED) < __atomic_load_n(&team_cap, __ATOMIC_RELAXED))
            team_task(team_arg);
        __atomic_fetch_sub(&team_state, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void
team_after_fork(void)
{
    /* (the child has no helpers; its locks start free) */
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER, busy = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    team_mu = mu;
    team_busy = busy;
    team_cv = cv;
    team_started = 0;
    team_state = TEAM_CLOSED;
    team_hot_until = 0;
}

/* fn(arg) on `threads` threads at most (this one and up to threads - 1 helpers), each
 * pulling work until none is left; 0 where the team cannot take it (busy with another
 * product, or helpers that could not be made): then the caller runs it on its own thread.
 * Called without the GIL. */
static int
team_run(int threads, team_fn fn, void *arg)
{
    if (threads < 2 || threads - 1 > TEAM_MAX) return 0;
    if (pthread_mutex_trylock(&team_busy) != 0) return 0;
    if (!team_forked) {
        team_forked = 1;
        pthread_atfork(NULL, NULL, team_after_fork);
    }
    while (team_started < threads - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        unsigned long e = __atomic_load_n(&team_epoch, __ATOMIC_ACQUIRE);
        int ok = pthread_create(&t, &attr, team_helper, (void *)(uintptr_t)e) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        team_started++;
    }
    if (team_started < threads - 1) {
        pthread_mutex_unlock(&team_busy);
        return 0;
    }
    team_task = fn;
    team_arg = arg;
    __atomic_store_n(&team_cap, threads - 1, __ATOMIC_RELAXED); /* (published by the epoch) */
#ifdef __linux__
    __atomic_store_n(&team_owner_cpu, sched_getcpu(), __ATOMIC_RELAXED);
#endif
    /* open (only the flag: a late helper of the last product may be between its add and
     * its subtract) */
    __atomic_fetch_and(&team_state, ~TEAM_CLOSED, __ATOMIC_RELEASE);
    pthread_mutex_lock(&team_mu);
    __atomic_add_fetch(&team_epoch, 1, __ATOMIC_ACQ_REL);
    pthread_cond_broadcast(&team_cv);
    pthread_mutex_unlock(&team_mu);
    fn(arg); /* (returns when no work is left to pull) */
    __atomic_fetch_or(&team_state, TEAM_CLOSED, __ATOMIC_ACQ_REL);
    for (long n = 0; (__atomic_load_n(&team_state, __ATOMIC_ACQUIRE) & ~TEAM_CLOSED) > 0; n++) {
        if (n > 100000) sched_yield(); /* (a helper another process holds up) */
        else team_pause();
    }
    /* hot: inside a call that pinned the BLAS and found more than one core free (with the
     * choice off -- SRCAD_ADAPTIVE_THREADS=0, set_adaptive(False) -- nobody looked: the
     * helpers sleep; under load, spinning ones took 5 ms more CPU a step) */
    /* (inside a call num_threads is the choice: threads_enter lowers it; gemm itself takes
     * threads_kernel_user, the user's count, whatever the choice) */
    int hot = threads_pin && threads_kernel_user > 0 && num_threads > 1 && threads_adaptive &&
              adaptive;
    __atomic_store_n(&team_hot_until, hot ? team_now() + TEAM_HOT_NS : 0, __ATOMIC_RELAXED);
    team_runs++;
    pthread_mutex_unlock(&team_busy);
    return 1;
}

/* a kernel's units split evenly between the team's threads (srcad_driver.c): thread t of T
 * works on [units * t / T, units * (t + 1) / T), whichever thread pulls it; flags OR-ed */
typedef int (*team_split_fn)(const void *, npy_intp, npy_intp);
typedef struct {
    team_split_fn work;
    const void *plan;
    npy_intp units;
    int threads;
    int flags; /* (atomic) */
    long long claimed, front, back; /* (atomic) shares handed out: team_claim */
} team_split;

static void
team_split_run(void *p)
{
    team_split *j = (team_split *)p;
    int T = j->threads;
    /* shares are pulled like gemm's blocks: the owner runs those no helper came for */
    for (long long t; (t = team_claim(&j->claimed, &j->front, &j->back, T)) >= 0;) {
        int f = j->work(j->plan, j->units * t / T, j->units * (t + 1) / T);
        __atomic_fetch_or(&j->flags, f, __ATOMIC_RELAXED);
    }
}

/* threads for a plain helper's pass over `size` elements (srcad_colsum.h, srcad_rowgrad.h), as a
 * kernel takes them: the per-call choice inside a call, above the kernels' size threshold */
static int
team_threads_for(npy_intp size)
{
    return size >= parallel_min && num_threads > 1 ? num_threads : 1;
}

/* work(plan, 0, units) in `threads` even shares on the team (at most one a unit), or on the
 * caller's thread where one thread is asked or the team cannot take it; the GIL released
 * meanwhile. The floating-point flags the shares raised, OR-ed. */
static int
team_shares(team_split_fn work, const void *plan, npy_intp units, int threads)
{
    int flags;
    if (units < threads) threads = (int)units;
    Py_BEGIN_ALLOW_THREADS
    team_split job = {work, plan, units, threads, 0, 0, 0, 0};
    if (threads > 1 && team_run(threads, team_split_run, &job)) flags = job.flags;
    else flags = work(plan, 0, units);
    Py_END_ALLOW_THREADS
    return flags;
}

typedef struct {
    int dt, lead, nb;
    PyArrayObject *a, *b;
    const char *abase, *bbase;
    char *obase;
    gemm_operand oa, ob;
    npy_intp tasks, blocks_per, per, m, k, n, out_item;
    long long claimed, front, back; /* (atomic) blocks handed out: team_claim */
} gemm_job;

/* block t of the job: rows [r0, r1) of matrix i of the product */
static void
gemm_task(const gemm_job *j, npy_intp t)
{
    npy_intp i = t / j->blocks_per, b = t % j->blocks_per;
    npy_intp r0 = b * j->per, r1 = b == j->blocks_per - 1 ? j->m : r0 + j->per;
    const char *ai = j->abase + gemm_item_offset(j->a, j->lead, i);
    const char *bi = j->bbase + (j->nb > 2 ? gemm_item_offset(j->b, j->lead, i) : 0);
    gemm_block(j->dt, ai, &j->oa, bi, &j->ob, j->obase + i * j->out_item, r0, r1, j->k, j->n);
}

static void
gemm_job_run(void *p)
{
    gemm_job *j = (gemm_job *)p;
    for (;;) {
        long long t = team_claim(&j->claimed, &j->front, &j->back, j->tasks);
        if (t < 0) break;
        gemm_task(j, t);
    }
}

static PyObject *
gemm_numpy(PyObject *a, PyObject *b)
{
    gemm_fellback++;
    return PyNumber_MatrixMultiply(a, b);
}

static PyObject *
py_gemm(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "gemm(a, b): two arguments");
        return NULL;
    }
    PyObject *ao = args[0], *bo = args[1];
    gemm_calls++;
    if (gemm_s == NULL || !PyArray_CheckExact(ao) || !PyArray_CheckExact(bo))
        return gemm_numpy(ao, bo);
    PyArrayObject *a = (PyArrayObject *)ao, *b = (PyArrayObject *)bo;
    int type = PyArray_TYPE(a), na = PyArray_NDIM(a), nb = PyArray_NDIM(b);
    if ((type != NPY_FLOAT && type != NPY_DOUBLE) || PyArray_TYPE(b) != type ||
        !PyArray_ISNOTSWAPPED(a) || !PyArray_ISNOTSWAPPED(b) || !PyArray_ISALIGNED(a) ||
        !PyArray_ISALIGNED(b) || na < 2 || nb < 2 || (nb > 2 && nb != na))
        return gemm_numpy(ao, bo);
    int dt = type == NPY_FLOAT ? 0 : 1;
    npy_intp size = dt == 0 ? 4 : 8, granule = gemm_granule[dt];
    int lead = na - 2;
    npy_intp m = PyArray_DIM(a, na - 2), k = PyArray_DIM(a, na - 1), n = PyArray_DIM(b, nb - 1);
    if (granule < 1 || PyArray_DIM(b, nb - 2) != k || m < 2 || k < 2 || n < 2)
        return gemm_numpy(ao, bo);
    npy_intp items = 1;
    for (int d = 0; d < lead; d++) {
        if (nb > 2 && PyArray_DIM(b, d) != PyArray_DIM(a, d)) return gemm_numpy(ao, bo);
        items *= PyArray_DIM(a, d);
    }
    if (items < 1 || !gemm_lead_c_order(a, lead) || (nb > 2 && !gemm_lead_c_order(b, lead)))
        return gemm_numpy(ao, bo);
    gemm_operand oa, ob;
    if (!gemm_operand_of(m, k, PyArray_STRIDE(a, na - 2), PyArray_STRIDE(a, na - 1), size,
                         &oa) ||
        !gemm_operand_of(k, n, PyArray_STRIDE(b, nb - 2), PyArray_STRIDE(b, nb - 1), size, &ob))
        return gemm_numpy(ao, bo);
    /* a matrix times its own transpose: numpy calls SYRK (other bits) */
    if (m == n && oa.trans != ob.trans && PyArray_STRIDE(a, na - 2) == PyArray_STRIDE(b, nb - 1) &&
        PyArray_STRIDE(a, na - 1) == PyArray_STRIDE(b, nb - 2)) {
        for (npy_intp i = 0; i < items; i++) {
            npy_intp ob_off = nb > 2 ? gemm_item_offset(b, lead, i) : 0;
            if (PyArray_BYTES(a) + gemm_item_offset(a, lead, i) == PyArray_BYTES(b) + ob_off)
                return gemm_numpy(ao, bo);
        }
    }
    npy_intp dims[SRCAD_MAXDIMS];
    if (na > SRCAD_MAXDIMS) return gemm_numpy(ao, bo);
    for (int d = 0; d < lead; d++) dims[d] = PyArray_DIM(a, d);
    dims[lead] = m;
    dims[lead + 1] = n;
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(na, dims, type);
    if (out == NULL) return NULL;
    if (PyArray_SIZE(out) == 0) return (PyObject *)out;

    /* the work: blocks of rows of each matrix, each starting at a multiple of the granule,
     * about GEMM_BLOCKS per thread where the product is large enough to share, none under
     * GEMM_MIN_ROWS rows: every block is a BLAS call that packs all of b again, and the
     * small block's 8 blocks of 24-72 rows (4 a thread) took 5.3% more CPU than one call
     * per product, 1.8% at 2 a thread and 64 rows or more (REPORT.md, "Small block: where
     * the step goes beyond its GEMMs") */
    int threads = threads_kernel_user > 0 ? threads_kernel_user : num_threads;
    double work = (double)items * (double)m * (double)k * (double)n;
    npy_intp per = m; /* rows per block */
    npy_intp least = GEMM_MIN_TAIL; /* rows the last block has at least */
    if (threads > 1 && work >= (double)gemm_min_work) {
        npy_intp want = gemm_blocks_per_thread * (npy_intp)threads;
        if (items < want) {
            npy_intp blocks = (want + items - 1) / items; /* per matrix */
            double kn = (double)k * (double)n;
            if (gemm_min_block[dt] > 0) {
                double rows = ((double)gemm_min_block[dt] + kn - 1) / kn;
                least = rows > (double)m ? m : (npy_intp)rows;
                if (least < GEMM_MIN_TAIL) least = GEMM_MIN_TAIL;
            }
            per = (m + blocks - 1) / blocks;
            if (per < GEMM_MIN_ROWS) per = GEMM_MIN_ROWS;
            if (per < least) per = least;
            per = ((per + granule - 1) / granule) * granule;
            if (per < 2 * granule) per = 2 * granule;
            if (per > m) per = m;
        }
    }
    else
        threads = 1;
    npy_intp blocks_per = (m + per - 1) / per;
    if (blocks_per > 1 && m - (blocks_per - 1) * per < least) blocks_per--; /* no small tail */
    npy_intp tasks = items * blocks_per;
    const char *abase = PyArray_BYTES(a), *bbase = PyArray_BYTES(b);
    char *obase = PyArray_BYTES(out);
    npy_intp out_item = m * n * size;
    if (tasks > 1) gemm_split++;
    gemm_job job = {dt, lead, nb, a, b, abase, bbase, obase, oa, ob, tasks, blocks_per, per,
                    m, k, n, out_item, 0, 0, 0};
    Py_BEGIN_ALLOW_THREADS
    if (!(threads > 1 && tasks > 1 && team_run(threads, gemm_job_run, &job)))
        for (npy_intp t = 0; t < tasks; t++) gemm_task(&job, t);
    Py_END_ALLOW_THREADS
    return (PyObject *)out;
}

/* gemm_configure(sgemm, dgemm, granule32, granule64[, min_work[, floor32, floor64[,
 * blocks_per_thread]]]) -> None: the 64-bit-integer cblas_sgemm/cblas_dgemm of numpy's
 * OpenBLAS (addresses; 0, 0: none, gemm is numpy's @), the rows a block starts at, the least
 * m*k*n of a product to split and rows*k*n of its blocks, the blocks a thread pulls (about);
 * an optional value left out or negative (0 for blocks_per_thread) keeps its setting */
static PyObject *
py_gemm_configure(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long s, d;
    Py_ssize_t g32, g64, min_work = -1, floor32 = -1, floor64 = -1;
    int per_thread = 0;
    if (!PyArg_ParseTuple(args, "KKnn|nnni", &s, &d, &g32, &g64, &min_work, &floor32, &floor64,
                          &per_thread))
        return NULL;
    if ((s == 0) != (d == 0)) {
        PyErr_SetString(PyExc_ValueError, "gemm_configure: both functions or neither");
        return NULL;
    }
    gemm_s = (gemm_s_fn)(uintptr_t)s;
    gemm_d = (gemm_d_fn)(uintptr_t)d;
    gemm_granule[0] = g32;
    gemm_granule[1] = g64;
    if (min_work >= 0) gemm_min_work = min_work;
    if (floor32 >= 0) gemm_min_block[0] = floor32;
    if (floor64 >= 0) gemm_min_block[1] = floor64;
    if (per_thread > 0) gemm_blocks_per_thread = per_thread;
    Py_RETURN_NONE;
}

static PyObject *
py_gemm_stats(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return Py_BuildValue("{s:i,s:n,s:n,s:n,s:n,s:n,s:i,s:K,s:K,s:K,s:K,s:i,s:K}", "configured",
                         gemm_s != NULL, "granule_float32", gemm_granule[0], "granule_float64",
                         gemm_granule[1], "floor_float32", gemm_min_block[0], "floor_float64",
                         gemm_min_block[1], "min_work", gemm_min_work, "blocks_per_thread",
                         gemm_blocks_per_thread, "calls", gemm_calls,
                         "split", gemm_split, "numpy", gemm_fellback, "team_runs", team_runs,
                         "team_helpers", team_started, "team_moves", team_moves);
}

#define SRCAD_GEMM_METHODS                                                                    \
    {"gemm", (PyCFunction)(void (*)(void))py_gemm, METH_FASTCALL,                           \
     "gemm(a, b): a @ b, numpy's bits at one BLAS thread, on srcad's threads"},              \
        {"gemm_configure", py_gemm_configure, METH_VARARGS,                                  \
         "gemm_configure(sgemm, dgemm, granule32, granule64[, min_work[, floor32, floor64[, "  \
         "blocks_per_thread]]])"},                                                           \
        {"gemm_stats", py_gemm_stats, METH_NOARGS, "gemm's counters and settings"},

#endif /* SRCAD_GEMM_H */
