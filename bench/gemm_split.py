"""Issue 25 item 2: the BLAS pinned at one thread + the runtime's gemm, against the BLAS left
at the user's threads (main's behaviour on a BLAS whose bits change with its threads), in ONE
process, rounds interleaved, so that the other processes on a shared machine load both alike.

Variants (toggled between calls through the runtime's configuration, no rebuild):
  * ``pinned+gemm``: srcad's calls run the BLAS at one thread; fused code's matmuls are the
    runtime's gemm (row blocks pulled dynamically by srcad's threads). What srcad does now
    where the BLAS's threads change its bits.
  * ``blas 2 thr``: the BLAS left at the user's count (2) and gemm handing every product to
    numpy: srcad before this change on such a CPU.
  * ``torch.compile`` (if torch is installed): the bar.

Rounds alternate quiet / one core busy (a child spinning on the last CPU, SIGSTOP/SIGCONT,
0.3 s after each switch), each round calling every variant once in a rotated order; medians
and the contended/quiet ratio of medians are printed with /proc/loadavg before and after and
the foreign CPU share (busy jiffies minus our own CPU time, spinner included in busy rounds).

    python bench/gemm_split.py [--rounds N] [--only small|large] [--no-torch]
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import srcad  # noqa: E402  (this tree's srcad, not an installed one)
from srcad import build  # noqa: E402
from srcad.build import blas  # noqa: E402
from srcad.zoo import transformer as T  # noqa: E402

SIZES = {"small": (8, 64, 128, 4), "large": (8, 128, 512, 8)}


def busy_seconds():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def own_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10, help="rounds of each kind (quiet, busy)")
    ap.add_argument("--only", default="small,large")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    rt = build.runtime()
    build.pooled(lambda: None)()  # (the BLAS found, pinned or not)
    if not build.threads_stats().get("blas_pinned"):
        print("this BLAS keeps its bits at any thread count: nothing is pinned here")
        return 0
    found = blas.thread_functions()
    fns = blas.gemm_functions(found[2])
    st = build.threads_stats()
    g32, g64 = st["granule_float32"], st["granule_float64"]

    def variant(pin: bool):
        if pin:
            rt.threads_configure(found[0], found[1], True)
            rt.gemm_configure(fns[0], fns[1], g32, g64)
        else:  # (as before: the BLAS's functions not handed over at all, gemm = numpy's @)
            rt.threads_configure(0, 0)
            rt.gemm_configure(0, 0, 0, 0)

    try:
        import torch
        import torch_twins as TT
    except ImportError:
        torch = None
    cpu = max(os.sched_getaffinity(0))
    spin = subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{cpu}}})"
                             "\nwhile True: pass\n"])
    os.kill(spin.pid, signal.SIGSTOP)
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, granules f32 {g32} f64 {g64}")
    try:
        for size in args.only.split(","):
            B, S, W, H = SIZES[size]
            rng = np.random.default_rng(0)
            p = T.randomize(rng, T.init(rng, W, H, np.float32), 0.02)
            x = rng.standard_normal((B, S, W)).astype(np.float32)
            probe = rng.standard_normal((B, S, W)).astype(np.float32)
            g = srcad.grad(T.block_loss, wrt="p", fuse=True)
            calls = {}
            for name, pin in (("pinned+gemm", True), ("blas 2 thr", False)):
                calls[name] = (lambda pin=pin: (variant(pin), g(p, x, H, probe)))
            if torch is not None and not args.no_torch:
                tp = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
                tx, tprobe = torch.tensor(x), torch.tensor(probe)
                leaves = list(tp.values())
                loss_fn = torch.compile(TT.block_loss, dynamic=False)

                def tc(loss_fn=loss_fn, tp=tp, leaves=leaves, tx=tx, tprobe=tprobe):
                    return torch.autograd.grad(loss_fn(tp, tx, H, tprobe), leaves)
                calls["torch.compile"] = tc
            for fn in calls.values():  # (builds, compiles, warm-up)
                for _ in range(3):
                    fn()
            variant(True)
            a = g(p, x, H, probe)
            variant(False)
            b_ = g(p, x, H, probe)
            differ = sum(not np.array_equal(a[k], b_[k]) for k in a)
            times = {(n, busy): [] for n in calls for busy in (0, 1)}
            load0, busy0, own0, t0 = open("/proc/loadavg").read().split()[:3], busy_seconds(), \
                own_seconds(), time.time()
            names = list(calls)
            for r in range(2 * args.rounds):
                busy = r % 2
                os.kill(spin.pid, signal.SIGCONT if busy else signal.SIGSTOP)
                time.sleep(0.3)
                k = r // 2
                for n in names[k % len(names):] + names[:k % len(names)]:
                    s = time.perf_counter()
                    calls[n]()
                    times[(n, busy)].append(time.perf_counter() - s)
            os.kill(spin.pid, signal.SIGSTOP)
            wall = time.time() - t0
            foreign = (busy_seconds() - busy0 - (own_seconds() - own0)) / (wall * os.cpu_count())
            variant(True)
            print(f"\nblock B{B} T{S} D{W}: {args.rounds} rounds each, quiet/busy interleaved; "
                  f"pinned vs 2-thread gradients differ in {differ}/{len(a)} arrays (last bits)")
            for n in names:
                q = statistics.median(times[(n, 0)]) * 1e3
                c = statistics.median(times[(n, 1)]) * 1e3
                print(f"  {n:14s} quiet {q:8.1f} ms  one core busy {c:8.1f} ms  ratio {c / q:.2f}")
            print(f"  loadavg {' '.join(load0)} -> "
                  f"{' '.join(open('/proc/loadavg').read().split()[:3])}; foreign CPU "
                  f"{100 * foreign:.0f}% of {os.cpu_count()} cores over {wall:.0f} s "
                  f"(the spinner's half of the busy rounds included)")
    finally:
        spin.kill()
        spin.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
