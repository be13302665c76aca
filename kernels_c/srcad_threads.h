/*
 * srcad_threads.h -- threads chosen per call from the cores actually free. Included by
 * srcad_driver.c alone, after its settings (num_threads).
 *
 * Why: numpy's OpenBLAS runs a GEMM on as many threads as the machine has cores, whether or
 * not another process is using them. With one core of two busy elsewhere, a two-thread GEMM
 * waits for its second thread at every synchronisation: the fused Transformer block (B8 T128
 * D512) took 3.1x its quiet time on a 2-core Xeon while one thread stayed level (issue 25).
 * So around every call of a generated entry point (pooled_vectorcall, srcad_pool.h) the
 * runtime looks at how many of the cores this process may run on are busy with other
 * processes, and if fewer are free than the user's BLAS threads, runs the call with that many
 * BLAS threads (and srcad's own kernel threads no more), then restores the user's setting.
 * On a quiet machine it changes nothing and costs a clock read and an uncontended lock.
 *
 * How busy: /proc/stat's per-CPU busy jiffies over the CPUs of this process's affinity mask,
 * less this process's own CPU time (CLOCK_PROCESS_CPUTIME_ID), over the last THREADS_PERIOD
 * seconds or so. The samples are taken by a sampler thread every THREADS_STEP seconds while
 * calls keep coming (it sleeps on a condition variable once THREADS_IDLE seconds pass without
 * one; a sample costs a read of /proc/stat), so a call sees the load of the last period even
 * when the calls are far apart: sampled only at the calls, a call 0.5 s after the last one
 * averaged over the whole gap, and a load that began 0.3 s before it counted as half a core
 * (bench/peers.py --contend, 2026-12-04). Where the thread cannot be made, or the calls come
 * back after a sleep, the call samples itself. A CPU counts as taken when the foreign load is
 * at least half a core (rounded). The BLAS: OpenBLAS's set/get functions, found by
 * srcad.build (ctypes, in the libraries numpy loaded) and handed over as addresses; without
 * them only srcad's kernel threads are chosen. Off with SRCAD_ADAPTIVE_THREADS=0 (or where
 * /proc/stat is not there). Values do not depend on it: srcad's kernels are elementwise
 * across threads, and the BLAS's threads are lowered only where its products keep their bits
 * at one thread and at the user's count (srcad/build/blas.py threads_change_values: most
 * OpenBLAS kernels split a GEMM's rows and columns, never its sums). Where they do not keep
 * them (0.3.31's Haswell SGEMM on a Zen 3: the threads' shares of the rows end inside the
 * micro-kernel's 12-row tiles, whose edge rows are summed in another order), the BLAS is
 * *pinned*: every srcad call runs it at one thread, loaded or not, so its products have the
 * one-thread bits in every call and mode, and srcad_gemm.h gets the parallelism back with
 * row blocks that srcad's threads pull as they come free. tests/test_threads_load.py and
 * tests/test_gemm.py check the gradients bit for bit.
 *
 * Caveat: OpenBLAS's thread count is one setting for the process; a call on one Python thread
 * that lowers it lowers it for a BLAS call another thread makes meanwhile (values unchanged
 * where the BLAS is not pinned; where it is, that other call gets the one-thread bits). Pinned
 * calls on several Python threads share the setting: the first in lowers it, the last out
 * restores it.
 */
#ifndef SRCAD_THREADS_H
#define SRCAD_THREADS_H

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define THREADS_PERIOD 0.1 /* seconds of load a call's choice looks at */
#define THREADS_STEP 0.05  /* seconds between the sampler thread's samples */
#define THREADS_IDLE 2.0   /* seconds without a call after which the sampler sleeps */
#define THREADS_RING 4     /* samples kept: the window starts at the newest one a period old */
#define THREADS_MAXCPU 1024

typedef void (*blas_set_fn)(int);
typedef int (*blas_get_fn)(void);

static int threads_adaptive = 1;
static blas_set_fn threads_blas_set = NULL;
static blas_get_fn threads_blas_get = NULL;
static double threads_last = -1.0;       /* when the last sample was taken (monotonic s) */
/* the last samples (ring): when, this process's CPU seconds then, busy jiffies of our CPUs */
static double threads_ring_t[THREADS_RING], threads_ring_own[THREADS_RING];
static unsigned long long threads_ring_busy[THREADS_RING];
static int threads_ring_n = 0, threads_ring_i = 0; /* samples held; the next slot */
/* the sampler thread: 0 not made, 1 running, -1 cannot be made (calls sample themselves);
 * threads_mu guards the samples, the state and threads_last_call */
static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t threads_cv;
static int threads_sampler = 0, threads_sampler_asleep = 0, threads_forked = 0;
static double threads_last_call = -1.0;  /* monotonic s of the last call's entry */
static double threads_foreign = 0.0;     /* cores busy with other processes (last period) */
static double threads_fake = -1.0;       /* tests: a foreign load to assume (< 0: measure) */
static int threads_ncpu = 1;             /* CPUs this process may run on */
static unsigned long long threads_samples = 0, threads_lowered = 0;
static int threads_last_choice = 0;
static __thread int threads_depth = 0;   /* pooled calls in progress on this thread */
static int threads_pin = 0;              /* the BLAS at one thread in every call (see enter) */
static int threads_pinned_calls = 0;     /* pinned calls in progress, all Python threads */
static int threads_pinned_user = 0;      /* the BLAS's threads before the first of them */
static int threads_kernel_user = 0;      /* srcad's kernel threads before the call lowered
                                          * them (srcad_gemm.h shares blocks dynamically, so
                                          * it uses them all); 0: outside a call */
static long threads_hz = 100;
static long long team_hot_until = 0; /* (atomic) srcad_gemm.h's helpers spin until then
                                      * (monotonic ns); at most TEAM_AFTER_NS more once the
                                      * outermost call returns */
static int team_outside = 1;         /* (atomic) no call in progress: a spinning helper
                                      * yields its core to any thread that wants it */
/* A hot team (srcad_gemm.h: its last product ran in a call that pinned the BLAS and found
 * more than one core free) stays awake this long after the outermost call returns, yielding
 * its core between looks: a helper that slept between two calls took ~60 us to wake for the
 * next call's first kernel and ~30 us more in its first product, and calls back to back (a
 * training loop) paid it every step -- the small Transformer block's fused step 3.89 ms
 * with the helper asleep between calls, 3.55 ms awake (REPORT.md, issue 25, "The team
 * awake between calls"). */
#define TEAM_AFTER_NS 2000000LL

/* the monotonic clock in ns (the team's spin deadlines) */
static long long
team_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double
threads_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifdef __linux__
/* busy jiffies (user+nice+system+irq+softirq+steal) of the CPUs in `mask`; 0 on failure */
static unsigned long long
threads_busy_jiffies(const cpu_set_t *mask)
{
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL) return 0;
    char line[512];
    unsigned long long busy = 0;
    int seen = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] != 'c' || line[1] != 'p' || line[2] != 'u') break;
        if (line[3] == ' ') continue; /* the aggregate line */
        int cpu;
        unsigned long long v[8] = {0};
        if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 5)
            continue;
        if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, mask)) continue;
        /* user nice system idle iowait irq softirq steal */
        busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        seen = 1;
    }
    fclose(f);
    return seen ? busy : 0;
}
#endif

static void
threads_sample(double t)
{
#ifndef __linux__
    (void)t;
    threads_adaptive = 0;
#else
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(getpid(), sizeof mask, &mask) != 0) {
        threads_adaptive = 0;
        return;
    }
    int n = CPU_COUNT(&mask);
    threads_ncpu = n > 0 ? n : 1;
    unsigned long long busy = threads_busy_jiffies(&mask);
    double own = threads_clock(CLOCK_PROCESS_CPUTIME_ID);
    if (busy == 0) {
        threads_adaptive = 0; /* no /proc/stat: nothing to choose from */
        return;
    }
    /* the window: from the newest held sample at least a period old (else the oldest) */
    int from = -1;
    for (int k = 1; k <= threads_ring_n; k++) {
        from = (threads_ring_i - k + THREADS_RING) % THREADS_RING;
        if (t - threads_ring_t[from] >= THREADS_PERIOD) break;
    }
    /* (a counter that went back -- a CPU taken offline, a forked child's own clock -- gives
     * no figure: the window starts again from here) */
    if (from >= 0 && t > threads_ring_t[from] && busy >= threads_ring_busy[from] &&
        own >= threads_ring_own[from]) {
        double wall = t - threads_ring_t[from];
        double all = (double)(busy - threads_ring_busy[from]) / (double)threads_hz;
        double foreign = (all - (own - threads_ring_own[from])) / wall;
        threads_foreign = foreign < 0.0 ? 0.0 : foreign;
        threads_samples++;
    }
    else if (from >= 0)
        threads_ring_n = 0;
    threads_ring_t[threads_ring_i] = t;
    threads_ring_busy[threads_ring_i] = busy;
    threads_ring_own[threads_ring_i] = own;
    threads_ring_i = (threads_ring_i + 1) % THREADS_RING;
    if (threads_ring_n < THREADS_RING) threads_ring_n++;
    threads_last = t;
#endif
}

#ifdef __linux__
/* the sampler thread: a sample every THREADS_STEP seconds while calls come, asleep after
 * THREADS_IDLE seconds without one (a call wakes it). Holds threads_mu but while it waits. */
static void *
threads_sampler_main(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "srcad-sampler");
    pthread_mutex_lock(&threads_mu);
    for (;;) {
        double t = threads_clock(CLOCK_MONOTONIC);
        if (t - threads_last_call > THREADS_IDLE) {
            threads_sampler_asleep = 1;
            while (threads_sampler_asleep) pthread_cond_wait(&threads_cv, &threads_mu);
            continue; /* (the waking call sampled) */
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)(THREADS_STEP * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec += 1;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&threads_cv, &threads_mu, &until);
        if (threads_adaptive) threads_sample(threads_clock(CLOCK_MONOTONIC));
    }
    return NULL;
}

static void
threads_after_fork(void)
{
    /* (the child has no sampler; its lock starts free -- the parent's was held by the
     * forking thread, see threads_before_fork -- and its samples are the parent's) */
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    threads_mu = mu;
    threads_sampler = 0;
    threads_sampler_asleep = 0;
    threads_ring_n = 0;
    threads_last = -1.0;
}

static void threads_before_fork(void) { pthread_mutex_lock(&threads_mu); }
static void threads_parent_fork(void) { pthread_mutex_unlock(&threads_mu); }

/* the sampler, made at the first call (threads_mu held); -1 where it cannot be */
static void
threads_start_sampler(void)
{
    pthread_condattr_t ca;
    pthread_attr_t attr;
    pthread_t th;
    if (!threads_forked) {
        threads_forked = 1;
        pthread_atfork(threads_before_fork, threads_parent_fork, threads_after_fork);
    }
    threads_sampler = -1;
    if (pthread_condattr_init(&ca) != 0) return;
    int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&threads_cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok) return;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 1 << 16);
    if (pthread_create(&th, &attr, threads_sampler_main, NULL) == 0) threads_sampler = 1;
    pthread_attr_destroy(&attr);
}

/* the foreign cores for a call at time t: the sampler's figure, or a sample now where the
 * sampler is not there or has not sampled for a period and a half (it slept, or was not
 * scheduled) */
static double
threads_measure(double t)
{
    pthread_mutex_lock(&threads_mu);
    threads_last_call = t;
    if (threads_sampler == 0) threads_start_sampler();
    if (threads_sampler_asleep) {
        threads_sampler_asleep = 0;
        pthread_cond_signal(&threads_cv);
    }
    if (threads_last < 0.0 || t - threads_last >= (threads_sampler == 1 ? 1.5 : 1.0) *
                                                        THREADS_PERIOD)
        threads_sample(t);
    double foreign = threads_foreign;
    pthread_mutex_unlock(&threads_mu);
    return foreign;
}
#else
static double
threads_measure(double t)
{
    (void)t;
    return 0.0;
}
#endif

/* before a call: lower the threads if cores are taken; returns the user's BLAS threads to
 * restore (0: nothing was changed) and, in *kernel, srcad's kernel threads to restore (0:
 * unchanged; -1: the choice did not run, nothing to undo). Not with set_adaptive(False)
 * either: who turns that off wants the threads set, every time (the thread tests).
 * With `threads_pin` (a BLAS whose products change with its thread count) the BLAS runs
 * every outermost call at one thread, loaded or not, and that regardless of the choice being
 * on: its bits must not depend on anything but the operands (srcad_gemm.h gets the
 * parallelism back). */
static int
threads_enter(int *kernel)
{
    *kernel = -1;
    int pinned = 0;
    if (threads_pin && threads_blas_get != NULL) {
        if (threads_depth++ > 0) {
            *kernel = -2; /* (exit: only the depth to undo) */
            return 0;
        }
        __atomic_store_n(&team_outside, 0, __ATOMIC_RELAXED);
        /* one setting for the process: the first call in progress (on any Python thread;
         * the GIL orders these) lowers it, the last one out restores it */
        if (threads_pinned_calls++ == 0) {
            threads_pinned_user = threads_blas_get();
            if (threads_pinned_user > 1) threads_blas_set(1);
        }
        pinned = -1; /* (exit: one pinned call less) */
        *kernel = -2;
        threads_kernel_user = num_threads;
    }
#ifndef __linux__
    return pinned; /* (no /proc/stat: the user's settings as they are) */
#endif
    if (!threads_adaptive || !adaptive) return pinned;
    if (*kernel == -2) {
        *kernel = 0;
    }
    else {
        *kernel = 0;
        if (threads_depth++ > 0) return 0;
        __atomic_store_n(&team_outside, 0, __ATOMIC_RELAXED);
        threads_kernel_user = num_threads;
    }
    double foreign = threads_measure(threads_clock(CLOCK_MONOTONIC));
    if (threads_fake >= 0.0) foreign = threads_fake;
    int taken = (int)(foreign + 0.5);
    int free_cpus = threads_ncpu - taken;
    if (free_cpus < 1) free_cpus = 1;
    int choice = free_cpus;
    threads_last_choice = choice;
    int restore = pinned;
    if (!threads_pin && threads_blas_set != NULL) {
        int blas = threads_blas_get();
        if (blas > choice) {
            threads_blas_set(choice);
            restore = blas;
        }
    }
    if (num_threads > choice) {
        *kernel = num_threads;
        num_threads = choice;
    }
    if ((restore && restore != -1) || *kernel) threads_lowered++;
    return restore;
}

static void
threads_exit(int blas, int kernel)
{
    if (kernel == -1) return;
    threads_depth--;
    if (blas == -1) {
        if (--threads_pinned_calls == 0 && threads_pinned_user > 1)
            threads_blas_set(threads_pinned_user);
    }
    else if (blas > 0 && threads_blas_set != NULL)
        threads_blas_set(blas);
    if (kernel > 0) num_threads = kernel;
    if (threads_depth == 0) {
        threads_kernel_user = 0;
        long long after = team_now() + TEAM_AFTER_NS;
        if (__atomic_load_n(&team_hot_until, __ATOMIC_RELAXED) > after)
            __atomic_store_n(&team_hot_until, after, __ATOMIC_RELAXED);
        __atomic_store_n(&team_outside, 1, __ATOMIC_RELAXED);
    }
}

/* threads_configure(set_address, get_address[, pin]) -> None: OpenBLAS's functions (0, 0:
 * none); pin: run every call's BLAS at one thread (its products change with its threads) */
static PyObject *
py_threads_configure(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long set_addr, get_addr;
    int pin = 0;
    if (!PyArg_ParseTuple(args, "KK|p", &set_addr, &get_addr, &pin)) return NULL;
    if ((set_addr == 0) != (get_addr == 0)) {
        PyErr_SetString(PyExc_ValueError, "threads_configure: both functions or neither");
        return NULL;
    }
    threads_blas_set = (blas_set_fn)(uintptr_t)set_addr;
    threads_blas_get = (blas_get_fn)(uintptr_t)get_addr;
    threads_pin = pin && set_addr != 0;
    Py_RETURN_NONE;
}

/* threads_assume(foreign_cores) -> previous: for tests, a foreign load to assume (< 0:
 * measure it) */
static PyObject *
py_threads_assume(PyObject *self, PyObject *arg)
{
    (void)self;
    double v = PyFloat_AsDouble(arg);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    double old = threads_fake;
    threads_fake = v;
    return PyFloat_FromDouble(old);
}

static PyObject *
py_threads_stats(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return Py_BuildValue("{s:i,s:i,s:d,s:i,s:K,s:K,s:i,s:i,s:i,s:i}", "adaptive", threads_adaptive,
                         "cpus", threads_ncpu, "foreign_cores", threads_foreign, "last_choice",
                         threads_last_choice, "samples", threads_samples, "lowered",
                         threads_lowered, "blas", threads_blas_set != NULL,
                         "blas_threads", threads_blas_get != NULL ? threads_blas_get() : 0,
                         "blas_pinned", threads_pin, "sampler", threads_sampler);
}

#define SRCAD_THREADS_METHODS                                                                 \
    {"threads_configure", py_threads_configure, METH_VARARGS,                                \
     "threads_configure(set_address, get_address[, pin]): the BLAS's thread-count functions"}, \
        {"threads_assume", py_threads_assume, METH_O,                                        \
         "threads_assume(foreign_cores) -> previous: a load to assume (< 0: measure)"},      \
        {"threads_stats", py_threads_stats, METH_NOARGS,                                     \
         "the per-call thread choice: CPUs, foreign load, last choice, samples, lowered"},

static void
threads_init(void)
{
    const char *env = getenv("SRCAD_ADAPTIVE_THREADS");
    if (env != NULL && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0)) threads_adaptive = 0;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz > 0) threads_hz = hz;
}

#endif /* SRCAD_THREADS_H */
