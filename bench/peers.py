"""Issue 15 — srcad against its peers on the CPU: torch eager, torch.compile, jax.jit(jax.grad).

Workloads, all float32, the same math on every side:

* ``block B8 T64 D128`` and ``block B8 T128 D512``: forward + backward of one pre-LN
  Transformer block (``srcad.zoo.transformer.block_loss``: LayerNorm, causal softmax
  attention, tanh-GELU 4x MLP; the loss is <block(x), probe>), gradients w.r.t. every
  parameter in the dict ``p`` (15 arrays). 4 heads at D128, 8 at D512.
* ``gpt step``: one training step of the demo's tiny GPT (``srcad.zoo.gpt.loss``, the
  ``python -m srcad demo`` configuration: 2 layers, width 64, 4 heads, context 32, batch 16,
  the sonnets' character vocabulary): value and gradients, then an Adam update (lr 1e-3).

The peers run the same source: torch uses the op-for-op twins in ``tests/torch_twins.py``
(F.layer_norm, F.gelu(approximate="tanh"), torch.softmax and F.cross_entropy compute the same
functions); jax runs the zoo's own files with ``np`` bound to ``jax.numpy``
(``bench/jax_twins.py``). Rows: srcad (``fuse=False``; ``fuse=True`` when this tree has it,
else the row says why it is absent; the default, fuse omitted: fused from the third call),
torch eager (forward + ``torch.autograd.grad``; the GPT step ``backward()`` +
``torch.optim.Adam``), ``torch.compile(dynamic=False)`` of the loss (AOTAutograd compiles
forward and backward; the Adam step stays eager), and ``jax.jit(jax.grad)`` (the GPT step jits
value_and_grad and a hand-written Adam with torch's formula together). A row whose peer is not
installed is skipped and says so.

How it is measured, in one process: every peer is built and its first call timed (srcad:
parse, transform, compile and run; torch.compile: trace, compile and run; jax: trace, XLA
compile and run); then ``warmup`` calls each; then ``repeat`` rounds, each calling every peer
twice in an order rotated per round -- a lead-in call, then the timed one, so that a timed
call follows its own peer's call as in a training loop, not another peer's, whose idle
threads may still spin on the cores (torch's libgomp, OpenBLAS) -- and the median (with the
25th/75th percentiles) of the timed calls is reported. jax results are waited for
(``block_until_ready``). Minor page faults per call are
``resource.getrusage(RUSAGE_SELF).ru_minflt`` deltas around each timed call (median).
Foreign CPU load: ``/proc/loadavg`` before and after, and the CPU time the whole machine spent
busy (``/proc/stat``) minus this process's own (``getrusage``) over the timed rounds, as a
fraction of wall time x cores. Threads: numpy's BLAS as threadpoolctl reports it (kernel,
thread count), ``OPENBLAS_CORETYPE``, ``torch.get_num_threads()``, and jax's CPU devices.

Gradient check: every peer's gradients (at the same initial parameters and batch) against
torch eager's, per array as max|g - g_torch| / max|g_torch| (a max-norm relative error), and
the worst array is reported; the bar is 1e-5. torch eager float32 against torch float64 is
printed beside it as the float32 noise floor of the computation itself.

Outputs: a table on stdout, ``bench/results/peers.json``, ``bench/results/peers.png`` and a
REPORT.md-ready section in ``--report`` (default /work/notes/peers_report.md when /work/notes
exists).

With ``--contend`` every peer also runs with one core made busy by the bench itself: a child
process spinning on the last CPU of this process's affinity, stopped (SIGSTOP) in the quiet
rounds and let run (SIGCONT) in the busy ones, rounds alternating, 0.3 s after each switch
before the calls; each peer's contended/quiet ratio of medians is reported (issue 25: a
library whose threads wait for a taken core collapses; srcad chooses its threads per call
from the cores free, kernels_c/srcad_threads.h).

    python bench/peers.py [--repeat N] [--quick] [--only block,gpt] [--contend]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import time
import warnings


def _threads_from_argv(argv):
    """--threads N must act before numpy, torch and jax start their pools."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return None


_THREADS = _threads_from_argv(sys.argv[1:])
if _THREADS is not None:
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _THREADS
    if _THREADS == "1":  # XLA's CPU backend: no Eigen thread pool for its kernels
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + " --xla_cpu_multi_thread_eigen=false").strip()

# srcad's first call is timed cold: its kernel cache starts empty (gcc runs) unless
# --warm-cache keeps the user's cache (torch.compile's and jax's on-disk caches are theirs)
if "--warm-cache" not in sys.argv[1:] and "SRCAD_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["SRCAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="srcad-peers-cold-cache-")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests"), HERE]

import srcad  # noqa: E402
from srcad.optim import Adam  # noqa: E402
from srcad.zoo import data, gpt  # noqa: E402
from srcad.zoo import transformer as T  # noqa: E402

try:
    import torch
    import torch_twins as TT
except ImportError:  # pragma: no cover - the bench says so in its rows
    torch = TT = None
if torch is not None and _THREADS is not None:
    torch.set_num_threads(int(_THREADS))
try:
    import jax
    import jax.numpy as jnp
    import jax_twins
except ImportError:
    jax = jnp = jax_twins = None

BLOCK_SIZES = [(8, 64, 128, 4), (8, 128, 512, 8)]
GPT_CFG = dict(width=64, heads=4, layers=2, context=32, batch=16, lr=1e-3)
GRAD_TOL = 1e-5


# -- small utilities ------------------------------------------------------------------------

def flatten(tree, prefix=""):
    """{path: numpy array} for a pytree of dicts/lists/tuples of arrays (torch or jax too)."""
    if isinstance(tree, dict):
        out = {}
        for k in tree:
            out.update(flatten(tree[k], f"{prefix}{k}."))
        return out
    if isinstance(tree, (list, tuple)):
        out = {}
        for i, v in enumerate(tree):
            out.update(flatten(v, f"{prefix}{i}."))
        return out
    if torch is not None and isinstance(tree, torch.Tensor):
        tree = tree.detach().numpy()
    return {prefix[:-1]: np.asarray(tree)}


def worst_rel_err(got: dict, ref: dict):
    """(worst max-norm relative error over arrays, its path)."""
    worst, where = 0.0, None
    for k, r in ref.items():
        g = got[k].astype(np.float64)
        r = r.astype(np.float64)
        scale = float(np.max(np.abs(r))) or 1.0
        e = float(np.max(np.abs(g - r))) / scale
        if e > worst or where is None:
            worst, where = e, k
    return worst, where


def blas_threads():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return [{"internal_api": blas.get("name"), "version": blas.get("version"),
                 "num_threads": None, "note": "threadpoolctl not installed"}]
    return [{k: p.get(k) for k in ("user_api", "internal_api", "version", "architecture",
                                  "num_threads", "filepath")} for p in threadpool_info()]


def cpu_busy_seconds():
    """Seconds the whole machine's CPUs were busy since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [float(v) for v in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return platform.processor()
    get = lambda key: next((ln.split(":", 1)[1].strip() for ln in info.splitlines()  # noqa: E731
                            if ln.startswith(key)), "?")
    flags = get("flags").split()
    isa = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2")
    return f"{get('model name')} (family {get('cpu family')}, {isa})"


# -- peers ----------------------------------------------------------------------------------

class Peer:
    """One row: `first()` runs the first call (transform/compile included) and returns the
    gradients to check; `step()` is one timed call; `skip` says why a row is absent."""

    def __init__(self, name, first=None, step=None, skip=None):
        self.name, self.first, self.step, self.skip = name, first, step, skip


def _srcad_fuse_available():
    """fuse=True on this tree? (Before the fusion merge, Options warns and runs unfused.)"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        srcad.grad(T.block_loss, wrt="p", fuse=True)
    for w in caught:
        if "not available" in str(w.message):
            return False, str(w.message)
    return True, None


def block_peers(batch, seq, width, heads, fuse_ok, fuse_why):
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, width, heads, np.float32), 0.02)
    x = rng.standard_normal((batch, seq, width)).astype(np.float32)
    probe = rng.standard_normal((batch, seq, width)).astype(np.float32)
    peers = []

    for fuse in (False, True, None):
        name = f"srcad fuse={fuse}" if fuse is not None else "srcad default"
        if fuse is not False and not fuse_ok:
            peers.append(Peer(name, skip=f"fuse=True absent on this tree ({fuse_why})"))
            continue
        g = srcad.grad(T.block_loss, wrt="p", **({} if fuse is None else {"fuse": fuse}))
        peers.append(Peer(name, first=lambda g=g: flatten(g(p, x, heads, probe)),
                          step=lambda g=g: g(p, x, heads, probe)))

    if torch is None:
        peers += [Peer("torch eager", skip="torch not installed"),
                  Peer("torch.compile", skip="torch not installed")]
    else:
        tx, tprobe = torch.tensor(x), torch.tensor(probe)
        for name, fn in (("torch eager", None), ("torch.compile", "compile")):
            tp = TT.to_torch(p)
            leaves = list(tp.values())
            if fn is None:
                loss_fn = TT.block_loss
            else:
                torch._dynamo.reset()
                loss_fn = torch.compile(TT.block_loss, dynamic=False)

            def call(loss_fn=loss_fn, tp=tp, leaves=leaves):
                return torch.autograd.grad(loss_fn(tp, tx, heads, tprobe), leaves)

            keys = list(tp)
            peers.append(Peer(name, first=lambda call=call, keys=keys:
                              flatten(dict(zip(keys, call()))), step=call))

    if jax is None:
        peers.append(Peer("jax.jit(grad)", skip="jax not installed (pip install .[bench])"))
    else:
        jT, _ = jax_twins.load()
        jp = {k: jnp.asarray(v) for k, v in p.items()}
        jx, jprobe = jnp.asarray(x), jnp.asarray(probe)
        jg = jax.jit(jax.grad(lambda p_, x_, pr_: jT.block_loss(p_, x_, heads, pr_)))

        def jcall():
            return jax.block_until_ready(jg(jp, jx, jprobe))

        peers.append(Peer("jax.jit(grad)", first=lambda: flatten(jcall()), step=jcall))

    def torch64():
        if torch is None:
            return None
        p64 = {k: v.astype(np.float64) for k, v in p.items()}
        _, grads, _ = TT.block_grads(p64, x.astype(np.float64), heads, probe.astype(np.float64))
        return flatten(grads)

    return peers, torch64


def gpt_peers(fuse_ok, fuse_why):
    c = GPT_CFG
    tok = data.CharTokenizer(data.TEXT)
    ids = tok.encode(data.TEXT)
    rng = np.random.default_rng(0)
    params0 = gpt.init(rng, tok.vocab_size, c["width"], c["heads"], c["layers"], c["context"],
                       dtype=np.float32)
    stream = data.batches(rng, ids, c["batch"], c["context"])
    batches = [next(stream) for _ in range(8)]
    heads, lr = c["heads"], c["lr"]
    tok0, tgt0 = batches[0]

    def copy(tree):
        return {k: ([{n: a.copy() for n, a in b.items()} for b in v] if k == "blocks"
                    else v.copy()) for k, v in tree.items()}

    peers = []
    for fuse in (False, True, None):
        name = f"srcad fuse={fuse}" if fuse is not None else "srcad default"
        if fuse is not False and not fuse_ok:
            peers.append(Peer(name, skip=f"fuse=True absent on this tree ({fuse_why})"))
            continue
        grad_fn = srcad.value_and_grad(gpt.loss, wrt="params",
                                       **({} if fuse is None else {"fuse": fuse}))
        params = copy(params0)
        opt = Adam(params, lr=lr)
        state = {"i": 0}

        def step(grad_fn=grad_fn, params=params, opt=opt, state=state):
            tk, tg = batches[state["i"] % len(batches)]
            state["i"] += 1
            _, grads = grad_fn(params, tk, tg, heads)
            opt.step(grads)

        def first(grad_fn=grad_fn, step=step):
            step()  # transform + first step; then the gradient at the initial parameters
            return flatten(grad_fn(copy(params0), tok0, tgt0, heads)[1])

        peers.append(Peer(name, first=first, step=step))

    if torch is None:
        peers += [Peer("torch eager", skip="torch not installed"),
                  Peer("torch.compile", skip="torch not installed")]
    else:
        tbatches = [(torch.tensor(a), torch.tensor(b)) for a, b in batches]
        for name, compiled in (("torch eager", False), ("torch.compile", True)):
            if compiled:
                torch._dynamo.reset()
                loss_fn = torch.compile(TT.gpt_loss, dynamic=False)
            else:
                loss_fn = TT.gpt_loss
            tp = TT.to_torch(params0)
            leaves = list(flatten_torch(tp))
            topt = torch.optim.Adam(leaves, lr=lr)
            state = {"i": 0}

            def step(loss_fn=loss_fn, tp=tp, topt=topt, state=state):
                tk, tg = tbatches[state["i"] % len(tbatches)]
                state["i"] += 1
                topt.zero_grad(set_to_none=True)
                loss_fn(tp, tk, tg, heads).backward()
                topt.step()

            def first(loss_fn=loss_fn, step=step):
                step()
                tp0 = TT.to_torch(params0)
                loss_fn(tp0, tbatches[0][0], tbatches[0][1], heads).backward()
                return flatten(TT.grads_of(tp0))

            peers.append(Peer(name, first=first, step=step))

    if jax is None:
        peers.append(Peer("jax.jit(grad)", skip="jax not installed (pip install .[bench])"))
    else:
        _, jG = jax_twins.load()
        b1, b2, eps = 0.9, 0.999, 1e-8

        def loss(p, tk, tg):
            return jG.loss(p, tk, tg, heads)

        def train_step(p, m, v, t, tk, tg):
            value, g = jax.value_and_grad(loss)(p, tk, tg)
            t = t + 1
            m = jax.tree_util.tree_map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
            v = jax.tree_util.tree_map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
            bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t

            def upd(p_, m_, v_):  # torch.optim.Adam's formula
                return p_ - (lr / bc1) * m_ / (jnp.sqrt(v_) / jnp.sqrt(bc2) + eps)

            return jax.tree_util.tree_map(upd, p, m, v), m, v, t, value

        jstep = jax.jit(train_step)
        jbatches = [(jnp.asarray(a), jnp.asarray(b)) for a, b in batches]
        to_j = lambda tree: jax.tree_util.tree_map(jnp.asarray, tree)  # noqa: E731
        st = {"p": to_j(params0), "i": 0}
        st["m"] = jax.tree_util.tree_map(jnp.zeros_like, st["p"])
        st["v"] = jax.tree_util.tree_map(jnp.zeros_like, st["p"])
        st["t"] = jnp.asarray(0.0, jnp.float32)

        def step():
            tk, tg = jbatches[st["i"] % len(jbatches)]
            st["i"] += 1
            st["p"], st["m"], st["v"], st["t"], value = jstep(st["p"], st["m"], st["v"],
                                                              st["t"], tk, tg)
            jax.block_until_ready(st["p"])

        def first():
            step()
            g = jax.jit(jax.grad(loss))(to_j(params0), *jbatches[0])
            return flatten(jax.block_until_ready(g))

        peers.append(Peer("jax.jit(grad)", first=first, step=step))

    def torch64():
        if torch is None:
            return None
        p64 = {k: ([{n: a.astype(np.float64) for n, a in b.items()} for b in v]
                   if k == "blocks" else v.astype(np.float64)) for k, v in params0.items()}
        _, grads = TT.gpt_grads(p64, tok0, tgt0, heads)
        return flatten(grads)

    return peers, torch64


def flatten_torch(tree):
    if isinstance(tree, dict):
        for v in tree.values():
            yield from flatten_torch(v)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from flatten_torch(v)
    else:
        yield tree


# -- the harness ----------------------------------------------------------------------------

class Spinner:
    """A child process keeping one core busy (the last CPU this process may use), switched
    on and off with SIGCONT / SIGSTOP."""

    def __init__(self):
        cpu = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        code = ("import os\n"
                + (f"os.sched_setaffinity(0, {{{cpu}}})\n" if cpu is not None else "")
                + "while True: pass\n")
        self.cpu = cpu
        self.proc = subprocess.Popen([sys.executable, "-c", code])
        self.busy(False)

    def busy(self, on: bool):
        os.kill(self.proc.pid, signal.SIGCONT if on else signal.SIGSTOP)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def measure(label, peers, torch64, repeat, warmup, contend=False):
    live = [p for p in peers if p.skip is None]
    rows = {p.name: {"skip": p.skip} for p in peers if p.skip is not None}
    grads = {}
    for p in live:
        gc.collect()
        t0 = time.perf_counter()
        grads[p.name] = p.first()
        rows[p.name] = {"first_call_s": time.perf_counter() - t0}
        for _ in range(warmup):
            p.step()
    ref = grads.get("torch eager")
    for p in live:
        if ref is not None:
            err, where = worst_rel_err(grads[p.name], ref)
            rows[p.name].update(grad_rel_err=err, grad_worst=where)
    noise = None
    ref64 = torch64()
    if ref is not None and ref64 is not None:
        noise = worst_rel_err(ref, ref64)
    times = {p.name: [] for p in live}
    busy_times = {p.name: [] for p in live}
    faults = {p.name: [] for p in live}
    spinner = Spinner() if contend else None
    load0, busy0, own0, wall0 = loadavg(), cpu_busy_seconds(), own_cpu_seconds(), time.time()
    gc.collect()
    gc.disable()
    try:
        for r in range(2 * repeat if contend else repeat):
            busy = contend and r % 2 == 1
            if contend:
                spinner.busy(busy)
                time.sleep(0.3)
            k = r // 2 if contend else r
            for p in live[k % len(live):] + live[:k % len(live)]:
                # (a lead-in call, not timed: the timed one then follows a call of its own
                # peer, as in a training loop, not another peer's -- whose idle threads
                # still spin for a while after it returns: torch's libgomp, OpenBLAS)
                p.step()
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                t0 = time.perf_counter()
                p.step()
                t1 = time.perf_counter()
                if busy:
                    busy_times[p.name].append(t1 - t0)
                    continue
                faults[p.name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
                times[p.name].append(t1 - t0)
            gc.collect()
    finally:
        gc.enable()
        if spinner is not None:
            spinner.close()
    wall = time.time() - wall0
    foreign = (cpu_busy_seconds() - busy0 - (own_cpu_seconds() - own0)) / (wall * os.cpu_count())
    for p in live:
        ts = sorted(times[p.name])
        q = statistics.quantiles(ts, n=4) if len(ts) > 1 else [ts[0]] * 3
        rows[p.name].update(median_ms=statistics.median(ts) * 1e3, p25_ms=q[0] * 1e3,
                            p75_ms=q[2] * 1e3, minflt_per_call=statistics.median(faults[p.name]))
        if contend:
            c = statistics.median(busy_times[p.name]) * 1e3
            rows[p.name].update(contended_ms=c, contended_ratio=c / rows[p.name]["median_ms"])
    # (with --contend the foreign CPU below includes the bench's own spinner's half of it)
    return {"workload": label, "rows": rows, "repeat": repeat, "contend": contend,
            "torch32_vs_torch64": None if noise is None else {"err": noise[0], "where": noise[1]},
            "load": {"loadavg_before": load0, "loadavg_after": loadavg(),
                     "foreign_cpu_fraction": max(0.0, foreign), "wall_s": wall}}


ORDER = ["srcad fuse=False", "srcad fuse=True", "srcad default", "srcad fixed threads",
         "torch eager",
         "torch.compile", "jax.jit(grad)"]


def fixed_threads_peer(peers):
    """With --contend: fused srcad again, with its per-call thread choice told the machine is
    quiet (the user's threads as they are: srcad before kernels_c/srcad_threads.h), so that
    the choice's effect is measured in the same rounds."""
    from srcad import build

    try:
        rt = build.runtime()  # (built or loaded now: the first workload's row needs it too)
    except Exception:  # noqa: BLE001 -- no compiler: no fused srcad, the row says so
        rt = None
    fused = next((p for p in peers if p.name == "srcad fuse=True" and p.skip is None), None)
    if fused is None or rt is None or not hasattr(rt, "threads_assume"):
        return Peer("srcad fixed threads", skip="no fused srcad with the per-call choice")

    def fixed(fn):
        def call():
            before = rt.threads_assume(0.0)
            try:
                return fn()
            finally:
                rt.threads_assume(before)
        return call

    return Peer("srcad fixed threads", first=fixed(fused.first), step=fixed(fused.step))


def print_table(res):
    print(f"\n{res['workload']}  (median of {res['repeat']} interleaved calls)")
    print(f"  {'peer':<18} {'step ms':>9} {'[p25, p75]':>17} {'first call s':>12} "
          f"{'minflt/call':>11} {'grad err':>9}")
    for name in ORDER:
        row = res["rows"].get(name)
        if row is None:
            continue
        if row.get("skip"):
            print(f"  {name:<18} skipped: {row['skip']}")
            continue
        err = row.get("grad_rel_err")
        print(f"  {name:<18} {row['median_ms']:9.2f} [{row['p25_ms']:7.2f}, {row['p75_ms']:7.2f}]"
              f" {row['first_call_s']:12.2f} {row['minflt_per_call']:11.0f} "
              f"{'-' if err is None else f'{err:9.1e}'}")
    if res.get("contend"):
        print(f"  one core busy (the bench's spinner), median of {res['repeat']} calls each:")
        for name in ORDER:
            row = res["rows"].get(name)
            if row and not row.get("skip"):
                print(f"  {name:<18} {row['contended_ms']:9.2f} ms contended, "
                      f"{row['median_ms']:9.2f} quiet: ratio {row['contended_ratio']:.2f}")
    n = res["torch32_vs_torch64"]
    ld = res["load"]
    if n:
        print(f"  float32 noise floor: torch eager float32 vs float64 {n['err']:.1e} ({n['where']})")
    print(f"  load: loadavg {' '.join(ld['loadavg_before'])} -> {' '.join(ld['loadavg_after'])}; "
          f"foreign CPU {100 * ld['foreign_cpu_fraction']:.1f}% of {os.cpu_count()} cores "
          f"over {ld['wall_s']:.1f} s")


def environment():
    env = {"cpu": cpu_name(), "cores": os.cpu_count(), "python": platform.python_version(),
           "numpy": np.__version__, "blas": blas_threads(),
           "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
           "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
           "XLA_FLAGS": os.environ.get("XLA_FLAGS"),
           "SRCAD_CACHE_DIR": os.environ.get("SRCAD_CACHE_DIR"),
           "SRCAD_GEMM": os.environ.get("SRCAD_GEMM"),
           "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY")}
    if torch is not None:
        env.update(torch=torch.__version__, torch_threads=torch.get_num_threads())
    if jax is not None:
        env.update(jax=jax.__version__, jax_devices=[str(d) for d in jax.devices()])
    return env


def env_line(env):
    blas = "; ".join(f"{b.get('internal_api')} {b.get('version')} {b.get('architecture')} "
                     f"{b.get('num_threads')} threads" for b in env["blas"]
                     if b.get("user_api", "blas") == "blas")
    line = (f"{env['cpu']}, {env['cores']} cores; numpy {env['numpy']} BLAS: {blas}; "
            f"OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}")
    if env.get("SRCAD_GEMM"):  # (fused srcad's products on another BLAS: srcad.build)
        line += f"; SRCAD_GEMM={env['SRCAD_GEMM']}"
    if "torch" in env:
        line += f"; torch {env['torch']} ({env['torch_threads']} threads)"
    if "jax" in env:
        line += f"; jax {env['jax']} ({len(env['jax_devices'])} CPU device, XLA's own pool)"
    return line


def write_report(path, env, results, command):
    lines = ["## srcad against its peers (issue 15)", "",
             f"`{command}` — {env_line(env)}. Same process, float32, medians of interleaved "
             "calls; first call = transform/compile + one call; gradients against torch eager "
             "as the worst per-array max|g - g_torch| / max|g_torch|.", "",
             "| workload | " + " | ".join(ORDER) + " |",
             "|---|" + "---|" * len(ORDER)]
    for res in results:
        cells = []
        for name in ORDER:
            row = res["rows"].get(name, {"skip": "not run"})
            if row.get("skip"):
                cells.append("—")
            else:
                cells.append(f"{row['median_ms']:.2f} ms")
        lines.append(f"| {res['workload']} | " + " | ".join(cells) + " |")
    lines += ["", "| workload | peer | first call | minor faults / call | grad err vs torch |",
              "|---|---|---|---|---|"]
    for res in results:
        for name in ORDER:
            row = res["rows"].get(name)
            if not row or row.get("skip"):
                continue
            err = row.get("grad_rel_err")
            lines.append(f"| {res['workload']} | {name} | {row['first_call_s']:.2f} s | "
                         f"{row['minflt_per_call']:.0f} | "
                         f"{'—' if err is None else f'{err:.1e}'} |")
    if any(res.get("contend") for res in results):
        lines += ["", ("One core busy (the bench's own spinner, alternate rounds): contended ms "
                       "(contended/quiet)"), "",
                  "| workload | " + " | ".join(ORDER) + " |", "|---|" + "---|" * len(ORDER)]
        for res in results:
            cells = []
            for name in ORDER:
                row = res["rows"].get(name, {"skip": "not run"})
                cells.append("—" if row.get("skip") or "contended_ms" not in row else
                             f"{row['contended_ms']:.2f} ms ({row['contended_ratio']:.2f}x)")
            lines.append(f"| {res['workload']} | " + " | ".join(cells) + " |")
    lines.append("")
    for res in results:
        ld, n = res["load"], res["torch32_vs_torch64"]
        skips = [f"{k}: {v['skip']}" for k, v in res["rows"].items() if v.get("skip")]
        lines.append(f"- {res['workload']}: loadavg {' '.join(ld['loadavg_before'])} -> "
                     f"{' '.join(ld['loadavg_after'])}, foreign CPU "
                     f"{100 * ld['foreign_cpu_fraction']:.1f}% of the cores"
                     + (f"; float32 noise floor (torch float32 vs float64) {n['err']:.1e}"
                        if n else "") + ("; skipped: " + "; ".join(skips) if skips else ""))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.6))
    axes = np.atleast_1d(axes)
    for ax, res in zip(axes, results):
        names = [n for n in ORDER if n in res["rows"] and not res["rows"][n].get("skip")]
        med = [res["rows"][n]["median_ms"] for n in names]
        lo = [m - res["rows"][n]["p25_ms"] for n, m in zip(names, med)]
        hi = [res["rows"][n]["p75_ms"] - m for n, m in zip(names, med)]
        ax.bar(range(len(names)), med, yerr=[lo, hi], color="C0", capsize=3)
        ax.set_xticks(range(len(names)), [n.replace(" ", "\n", 1) for n in names], fontsize=7)
        ax.set_title(res["workload"], fontsize=9)
        ax.set_ylabel("ms per step (median, p25-p75)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small block and GPT, 5 rounds; "
                    "writes nothing")
    ap.add_argument("--only", default="block,gpt")
    ap.add_argument("--warm-cache", action="store_true", help="keep srcad's kernel cache "
                    "(default: a fresh, empty one, so that srcad's first call includes gcc)")
    ap.add_argument("--threads", default=None, help="threads for every peer's kernels "
                    "(BLAS, OpenMP, torch, XLA); default: each library's own (all cores)")
    ap.add_argument("--contend", action="store_true", help="also run every peer with one "
                    "core kept busy by the bench (alternate rounds) and report contended/quiet")
    ap.add_argument("--report", default="/work/notes/peers_report.md"
                    if os.path.isdir("/work/notes") else None)
    args = ap.parse_args(argv)
    if not set(args.only.split(",")) <= {"block", "gpt"}:  # (no empty results file written)
        ap.error(f"--only takes block, gpt or both, not {args.only!r}")
    repeat = 5 if args.quick else args.repeat
    env = environment()
    print(env_line(env))
    fuse_ok, fuse_why = _srcad_fuse_available()
    results = []
    only = set(args.only.split(","))
    if "block" in only:
        for size in BLOCK_SIZES[:1] if args.quick else BLOCK_SIZES:
            b, t, d, h = size
            peers, t64 = block_peers(*size, fuse_ok, fuse_why)
            if args.contend:
                peers.append(fixed_threads_peer(peers))
            res = measure(f"block B{b} T{t} D{d}", peers, t64,
                          repeat if d < 512 else max(5, repeat // 2), args.warmup,
                          args.contend)
            print_table(res)
            results.append(res)
    if "gpt" in only:
        peers, t64 = gpt_peers(fuse_ok, fuse_why)
        if args.contend:
            peers.append(fixed_threads_peer(peers))
        c = GPT_CFG
        res = measure(f"gpt step L{c['layers']} D{c['width']} B{c['batch']} T{c['context']}",
                      peers, t64, repeat, args.warmup, args.contend)
        print_table(res)
        results.append(res)
    if args.quick:
        return 0
    out = os.path.join(HERE, "results")
    os.makedirs(out, exist_ok=True)
    command = "python bench/peers.py" + ("" if argv is None else " " + " ".join(argv))
    with open(os.path.join(out, "peers.json"), "w") as f:
        json.dump({"command": command, "environment": env, "results": results}, f, indent=1)
    plot(results, os.path.join(out, "peers.png"))
    if args.report:
        write_report(args.report, env, results, command)
        print(f"\nwrote bench/results/peers.json, bench/results/peers.png and {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
