/*
 * srcad_pool.h -- the buffer pool: a caching allocator for numpy's array data, installed
 * (through numpy's PyDataMem_SetHandler, a context variable) only while srcad's generated
 * functions run. Included by srcad_driver.c alone.
 *
 * Why: a generated gradient allocates the same arrays, of the same sizes, on every call.
 * glibc serves a block above its mmap threshold (128 KiB to 32 MiB, adapting) with fresh
 * pages and hands it back to the kernel on free, and it trims the top of its heap, so every
 * call faults its arrays in again, page by page: 4,000-12,000 minor faults and several ms of
 * system time per call of the Transformer block's gradient on these machines. The pool keeps
 * freed blocks in lists by size and hands them out again, so a repeated call of the same
 * specialisation takes no new pages (the allocator PyTorch keeps for CUDA works the same way).
 *
 * What it does not change: the values (numpy's loops do not depend on where an array
 * lives), what tracemalloc sees (numpy tracks every array's bytes around the handler's
 * calls, so srcad.checkpoint.measure_peak and the memory plan's peaks are unchanged), or the
 * arrays' lifetimes: an array made inside a srcad call and kept by the user is freed through
 * the pool whenever the user drops it (numpy frees an array with the handler that made it),
 * and its block is then reused.
 *
 * Layout: every block is one 64-byte header followed by the data (so the data is 64-byte
 * aligned); the header holds the block's capacity (its size class), how it was got from the
 * system and, while the block is free, the link of its list. Size classes: multiples of 64
 * bytes up to 4 KiB, of 4 KiB above. Free lists: an open-addressed table keyed by the class.
 * Freed blocks are kept while the bytes kept stay under the limit (SRCAD_POOL_LIMIT bytes,
 * default 1 GiB), else they go back to the system. SRCAD_BUFFER_POOL=0 turns the pool off
 * (the handler is then never installed). A mutex guards the lists: numpy may free an array
 * without the GIL.
 *
 * Blocks of 64 KiB and more (SRCAD_POOL_MAP_MIN bytes; "off": none) are mappings of their
 * own (mmap), unmapped when they go back: the process's memory is then bounded by what is in
 * use plus the limit. From malloc it was not: with a limit below a call's working set and a
 * caller that keeps some gradients, the blocks the pool gave back fragmented glibc's heap
 * around the kept arrays, neither reused for the next call's blocks nor returned to the
 * kernel, and the resident set grew without end (the MLP of tests/test_pool_rss.py, limit
 * 1 MiB, every 25th gradient kept: 109 MiB above the kept bytes after 3,000 calls and
 * rising; 0 MiB as mappings). Smaller blocks still come from malloc (a mapping costs a page
 * and a system call). A mapping the kernel refuses (vm.max_map_count) falls back to malloc.
 * A fresh mapping is zeros, so calloc skips the memset there.
 */
#ifndef SRCAD_POOL_H
#define SRCAD_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define POOL_HEAD 64
#define POOL_MAGIC 0x5352434144504f4fULL /* "SRCADPOO" */
#define POOL_SLOTS 1024                  /* size classes the table can hold (a power of 2) */
#define POOL_HUGE (4u << 20)             /* from here on, ask for huge pages (as numpy does) */

typedef struct pool_head {
    size_t cap;             /* bytes of data this block holds */
    uint64_t magic;         /* POOL_MAGIC: the block is the pool's */
    struct pool_head *next; /* the next free block of the same class, while free */
    size_t mapped;          /* bytes of its mapping (munmap), or 0: from malloc (free) */
    void *base;             /* where its mapping starts (the header is `colour` bytes in) */
} pool_head;

typedef struct {
    size_t cap;      /* the class (0: an empty slot) */
    pool_head *free; /* its free blocks */
} pool_slot;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pool_slot pool_table[POOL_SLOTS];
static int pool_enabled = 1;
static size_t pool_limit = (size_t)1 << 30;
/* counters (under the lock): bytes in free lists, bytes handed out, requests served from a
 * free list and from the system, blocks given back to the system because of the limit */
static size_t pool_kept = 0, pool_out = 0, pool_peak = 0;
static unsigned long long pool_hits = 0, pool_misses = 0, pool_spills = 0;

static size_t
pool_class(size_t n)
{
    if (n == 0) n = 1;
    if (n <= 4096) return (n + 63) & ~(size_t)63;
    return (n + 4095) & ~(size_t)4095;
}

/* the slot of class `cap`: its own, else the empty one where it would go (NULL: full) */
static pool_slot *
pool_slot_of(size_t cap)
{
    size_t h = (cap >> 6) * 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < POOL_SLOTS; i++) {
        pool_slot *s = &pool_table[(h + i) & (POOL_SLOTS - 1)];
        if (s->cap == cap || s->cap == 0) return s;
    }
    return NULL;
}

static size_t pool_page = 4096;
/* from here on, a block is a mapping of its own (SRCAD_POOL_MAP_MIN; "off": never) */
static size_t pool_map_min = (size_t)64 << 10;

static void
pool_advise_huge(void *p, size_t cap)
{
#ifdef MADV_HUGEPAGE
    if (cap >= POOL_HUGE) {
        /* the page-aligned part of the block, as numpy's own allocator does */
        uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t hi = ((uintptr_t)p + POOL_HEAD + cap) & ~(uintptr_t)4095;
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#else
    (void)p;
    (void)cap;
#endif
}

/* a new block of class `cap` from the system; *zeroed: its data is known to be zeros */
static void *
pool_fresh(size_t cap, int *zeroed)
{
    void *p = NULL;
    size_t mapped = 0;
    *zeroed = 0;
    if (cap > SIZE_MAX - POOL_HEAD - pool_page) return NULL;
    void *base = NULL;
    if (cap >= pool_map_min) {
        /* the block starts at one of 64 cache-line offsets in its first page, in turn
         * (jemalloc's "cache-oblivious" large allocations do the same): arrays that all
         * began at the same page offset would contend for the same cache sets, and a loop
         * reading one while writing another would see 4 KiB aliasing */
        static unsigned colour_next = 0;
        size_t colour = (size_t)(__atomic_fetch_add(&colour_next, 1u, __ATOMIC_RELAXED) & 63u)
                        * 64;
        size_t len = (colour + POOL_HEAD + cap + pool_page - 1) & ~(pool_page - 1);
        base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            base = NULL; /* (out of mappings, or of memory: malloc may still serve it) */
        else {
            p = (char *)base + colour;
            mapped = len;
            *zeroed = 1;
        }
    }
    if (p == NULL && posix_memalign(&p, 64, POOL_HEAD + cap) != 0) return NULL;
    pool_advise_huge(p, cap);
    pool_head *h = (pool_head *)p;
    h->cap = cap;
    h->magic = POOL_MAGIC;
    h->next = NULL;
    h->mapped = mapped;
    h->base = base;
    return p;
}

/* give one block back to the system */
static void
pool_unmake(pool_head *h)
{
    h->magic = 0;
    if (h->mapped)
        munmap(h->base, h->mapped);
    else
        free(h);
}

/* a block of at least `size` bytes; *zeroed: its data is known to be zeros */
static void *
pool_get(size_t size, int *zeroed)
{
    size_t cap = pool_class(size);
    pool_head *h = NULL;
    *zeroed = 0;
    pthread_mutex_lock(&pool_lock);
    pool_slot *s = pool_slot_of(cap);
    if (s != NULL && s->cap == cap && s->free != NULL) {
        h = s->free;
        s->free = h->next;
        pool_kept -= cap;
        pool_hits++;
    }
    else {
        pool_misses++;
    }
    pool_out += cap;
    if (pool_out > pool_peak) pool_peak = pool_out;
    pthread_mutex_unlock(&pool_lock);
    if (h == NULL) {
        h = (pool_head *)pool_fresh(cap, zeroed);
        if (h == NULL) {
            pthread_mutex_lock(&pool_lock);
            pool_out -= cap;
            pthread_mutex_unlock(&pool_lock);
            return NULL;
        }
    }
    h->next = NULL;
    return (char *)h + POOL_HEAD;
}

static void *
pool_malloc(void *ctx, size_t size)
{
    (void)ctx;
    int zeroed;
    return pool_get(size, &zeroed);
}

static void *
pool_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    if (elsize != 0 && nelem > SIZE_MAX / elsize) return NULL;
    int zeroed;
    void *p = pool_get(nelem * elsize, &zeroed);
    if (p != NULL && !zeroed) memset(p, 0, nelem * elsize); /* (a fresh mapping is zeros) */
    return p;
}

static void
pool_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size; /* the header knows the class; numpy's size is the array's bytes */
    if (ptr == NULL) return;
    pool_head *h = (pool_head *)((char *)ptr - POOL_HEAD);
    if (h->magic != POOL_MAGIC) {
        /* not ours: cannot happen through numpy (an array is freed by the handler that made
         * it); give it to free() rather than corrupt the lists */
        free(ptr);
        return;
    }
    size_t cap = h->cap;
    int keep = 0;
    pthread_mutex_lock(&pool_lock);
    pool_out -= cap;
    if (pool_enabled && pool_kept + cap <= pool_limit) {
        pool_slot *s = pool_slot_of(cap);
        if (s != NULL) {
            s->cap = cap;
            h->next = s->free;
            s->free = h;
            pool_kept += cap;
            keep = 1;
        }
    }
    if (!keep) pool_spills++;
    pthread_mutex_unlock(&pool_lock);
    if (!keep) pool_unmake(h);
}

static void *
pool_realloc(void *ctx, void *ptr, size_t new_size)
{
    if (ptr == NULL) return pool_malloc(ctx, new_size);
    pool_head *h = (pool_head *)((char *)ptr - POOL_HEAD);
    if (h->magic != POOL_MAGIC) return realloc(ptr, new_size);
    if (new_size <= h->cap) return ptr;
    void *p = pool_malloc(ctx, new_size);
    if (p == NULL) return NULL;
    memcpy(p, ptr, h->cap);
    pool_free(ctx, ptr, h->cap);
    return p;
}

/* give every kept block back to the system (the blocks in use stay the pool's) */
static void
pool_release(void)
{
    pool_head *lists = NULL;
    pthread_mutex_lock(&pool_lock);
    for (size_t i = 0; i < POOL_SLOTS; i++) {
        pool_head *b = pool_table[i].free;
        while (b != NULL) {
            pool_head *next = b->next;
            b->next = lists;
            lists = b;
            b = next;
        }
        pool_table[i].free = NULL; /* the class stays: a later free lands in the same slot */
    }
    pool_kept = 0;
    pthread_mutex_unlock(&pool_lock);
    while (lists != NULL) {
        pool_head *next = lists->next;
        pool_unmake(lists);
        lists = next;
    }
}

static void
pool_after_fork(void)
{
    /* a fork while another thread held the lock would leave it held in the child */
    pthread_mutex_init(&pool_lock, NULL);
}

static PyDataMem_Handler pool_handler = {
    "srcad_pool", 1, {NULL, pool_malloc, pool_calloc, pool_realloc, pool_free},
};
static PyObject *pool_capsule = NULL; /* the handler as numpy takes it; lives for ever */

/* -- pooled(fn): fn, run with the pool as numpy's allocator ------------------------------ */

/* the threads chosen per call from the cores free (srcad_threads.h, included later) */
static int threads_enter(int *kernel);
static void threads_exit(int blas, int kernel);

typedef struct {
    PyObject_HEAD
    PyObject *fn;
    vectorcallfunc vectorcall;
    int pool; /* 0: only the per-call thread choice (pooled(fn, False)), not the allocator */
} Pooled;

static PyObject *
pooled_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *fn = ((Pooled *)self)->fn;
    int kernel_threads, blas_threads = threads_enter(&kernel_threads);
    if (!pool_enabled || !((Pooled *)self)->pool) {
        PyObject *result = PyObject_Vectorcall(fn, args, nargsf, kwnames);
        threads_exit(blas_threads, kernel_threads);
        return result;
    }
    PyObject *before = PyDataMem_SetHandler(pool_capsule);
    if (before == NULL) {
        threads_exit(blas_threads, kernel_threads);
        return NULL;
    }
    PyObject *result = PyObject_Vectorcall(fn, args, nargsf, kwnames);
    threads_exit(blas_threads, kernel_threads);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *ours = PyDataMem_SetHandler(before);
    Py_DECREF(before);
    if (ours == NULL) {
        /* cannot restore the caller's allocator: say so, whatever the call returned */
        Py_XDECREF(result);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return NULL;
    }
    Py_DECREF(ours);
    PyErr_Restore(type, value, tb);
    return result;
}

static void
pooled_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    Py_CLEAR(((Pooled *)self)->fn);
    PyObject_GC_Del(self);
}

static int
pooled_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((Pooled *)self)->fn);
    return 0;
}

static int
pooled_clear(PyObject *self)
{
    Py_CLEAR(((Pooled *)self)->fn);
    return 0;
}

/* attributes are the function's (__name__, __code__, ...); __wrapped__ is the function */
static PyObject *
pooled_getattro(PyObject *self, PyObject *name)
{
    PyObject *fn = ((Pooled *)self)->fn;
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
        Py_INCREF(fn);
        return fn;
    }
    return PyObject_GetAttr(fn, name);
}

static PyObject *
pooled_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<pooled %R>", ((Pooled *)self)->fn);
}

static PyTypeObject PooledType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "srcad._kernels.pooled",
    .tp_basicsize = sizeof(Pooled),
    .tp_dealloc = pooled_dealloc,
    .tp_vectorcall_offset = offsetof(Pooled, vectorcall),
    .tp_repr = pooled_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = pooled_getattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "pooled(fn): fn, with srcad's buffer pool as numpy's allocator while it runs",
    .tp_traverse = pooled_traverse,
    .tp_clear = pooled_clear,
};

static PyObject *
py_pooled(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *fn;
    int pool = 1;
    if (!PyArg_ParseTuple(args, "O|p:pooled", &fn, &pool)) return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "pooled(fn): fn must be callable");
        return NULL;
    }
    Pooled *p = PyObject_GC_New(Pooled, &PooledType);
    if (p == NULL) return NULL;
    Py_INCREF(fn);
    p->fn = fn;
    p->vectorcall = pooled_vectorcall;
    p->pool = pool;
    PyObject_GC_Track((PyObject *)p);
    return (PyObject *)p;
}

static PyObject *
py_pool_stats(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    pthread_mutex_lock(&pool_lock);
    size_t kept = pool_kept, out = pool_out, peak = pool_peak;
    unsigned long long hits = pool_hits, misses = pool_misses, spills = pool_spills;
    pthread_mutex_unlock(&pool_lock);
    Py_ssize_t map_min = pool_map_min > (size_t)PY_SSIZE_T_MAX ? -1 : (Py_ssize_t)pool_map_min;
    return Py_BuildValue("{s:i,s:n,s:n,s:n,s:n,s:K,s:K,s:K,s:n}", "enabled", pool_enabled,
                         "limit", (Py_ssize_t)pool_limit, "kept", (Py_ssize_t)kept, "in_use",
                         (Py_ssize_t)out, "peak_in_use", (Py_ssize_t)peak, "hits", hits,
                         "misses", misses, "spills", spills, "map_min", map_min);
}

static PyObject *
py_pool_release(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    pool_release();
    Py_RETURN_NONE;
}

/* pool_configure(enabled, limit[, map_min]) -> (enabled, limit) before; limit < 0 leaves
 * it; map_min: blocks from this size on are mappings (-1: none; absent: unchanged) */
static PyObject *
py_pool_configure(PyObject *self, PyObject *args)
{
    (void)self;
    int enabled;
    long long limit, map_min = -2;
    if (!PyArg_ParseTuple(args, "pL|L", &enabled, &limit, &map_min)) return NULL;
    PyObject *before = Py_BuildValue("(On)", pool_enabled ? Py_True : Py_False,
                                     (Py_ssize_t)pool_limit);
    pthread_mutex_lock(&pool_lock);
    pool_enabled = enabled;
    if (limit >= 0) pool_limit = (size_t)limit;
    if (map_min >= 0) pool_map_min = (size_t)map_min;
    if (map_min == -1) pool_map_min = SIZE_MAX;
    pthread_mutex_unlock(&pool_lock);
    if (!enabled || (limit >= 0 && pool_kept > pool_limit)) pool_release();
    return before;
}

#define SRCAD_POOL_METHODS                                                                    \
    {"pooled", py_pooled, METH_VARARGS,                                                      \
     "pooled(fn[, pool]) -> fn that runs with srcad's buffer pool as numpy's allocator "    \
     "(pool False: with the per-call thread choice only)"},                                  \
        {"pool_stats", py_pool_stats, METH_NOARGS,                                           \
         "the buffer pool's bytes kept, in use, their peak, hits, misses, spills"},          \
        {"pool_release", py_pool_release, METH_NOARGS,                                       \
         "give the pool's free blocks back to the system"},                                  \
        {"pool_configure", py_pool_configure, METH_VARARGS,                                  \
         "pool_configure(enabled, limit_bytes[, map_min]) -> the settings before (limit < 0: "  \
         "keep; map_min -1: no mappings)"},

/* module init: the type, the capsule, the environment's settings */
static int
pool_init(PyObject *m)
{
    const char *env = getenv("SRCAD_BUFFER_POOL");
    if (env != NULL && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0)) pool_enabled = 0;
    env = getenv("SRCAD_POOL_LIMIT");
    if (env != NULL && *env) pool_limit = (size_t)strtoull(env, NULL, 10);
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0 && (page & (page - 1)) == 0) pool_page = (size_t)page;
    env = getenv("SRCAD_POOL_MAP_MIN");
    if (env != NULL && *env) {
        if (strcmp(env, "off") == 0)
            pool_map_min = SIZE_MAX;
        else
            pool_map_min = (size_t)strtoull(env, NULL, 10);
    }
    pthread_atfork(NULL, NULL, pool_after_fork);
    if (PyType_Ready(&PooledType) < 0) return -1;
    pool_capsule = PyCapsule_New(&pool_handler, "mem_handler", NULL);
    if (pool_capsule == NULL) return -1;
    Py_INCREF(pool_capsule); /* the module's reference, and one that is never dropped */
    return PyModule_AddObject(m, "pool_handler", pool_capsule);
}

#endif /* SRCAD_POOL_H */
