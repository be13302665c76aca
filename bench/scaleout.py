"""E11 — scale-out: data-parallel srcad gradients over Dask worker processes (srcad.parallel).

What it measures, on this machine, against the single-process step (the same fused
value_and_grad called in this process on the whole batch):

* the demo's GPT (2 layers, width 64, context 32, batch 16, float32; `python -m srcad demo`):
  tokens/s of one training step's gradient, sharded over 1, 2 (and 4, ... where the CPUs
  allow) worker processes, one thread each;
* a larger GPT (4 layers, width 256, 8 heads, context 64, batch 32): the step time;
* the communication cost per step: the same tasks with no compute (each worker gets the
  parameters and its shard and returns zeros of the parameters' shape), timed, and the bytes
  they move; the fixed-order reduction's own time;
* engines: the cluster's set-up time, and the same no-compute step on MPI (mpi4py under
  mpiexec, bench/scaleout_mpi.py); a worker killed mid-step on each: Dask reruns the shard
  (the step's time with the kill is printed), MPI ends the whole job;
* the loss curve: 20 training steps sharded over 2 workers equal `Sharded.local`'s (the same
  shards in one process) bit for bit; against the unsharded steps the largest difference.

Prediction (written before the measurement): with 2 cores shared by the client, the
scheduler and the workers, sharding cannot beat the single process, which already runs its
GEMMs on both cores; the demo's step (~10-30 ms when the machine is idle) is of the order of
Dask's per-task overhead (~5-20 ms a round trip), so 2 workers are slower than one process,
and the larger model (~10x the work per step) gets closer to parity.

Outputs: a table on stdout, bench/results/e11_results.json and bench/results/e11_scaleout.png
(skipped, with a note, if matplotlib is missing).

    python bench/scaleout.py [--quick | --replot]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # (this checkout's srcad; worker processes inherit the path)

import srcad
from srcad import parallel
from srcad.build import set_num_threads
from srcad.zoo import data, gpt

RESULTS = ROOT / "bench" / "results"
MODELS = {  # width, heads, layers, context, batch
    "demo": (64, 4, 2, 32, 16),
    "large": (256, 8, 4, 64, 32),
}


def cpu() -> dict:
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    info = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    flags = info.get("Flags", "")
    return {"model": info.get("Model name", "?").strip(),
            "family": info.get("CPU family", "?").strip(), "cpus": os.cpu_count(),
            "avx512f": "avx512f" in flags, "load_avg_at_start": os.getloadavg()}


def model(name: str, rng):
    width, heads, layers, context, batch = MODELS[name]
    tok = data.CharTokenizer(data.TEXT)
    params = gpt.init(rng, tok.vocab_size, width, heads, layers, context, dtype=np.float32)
    ids = tok.encode(data.TEXT)
    return params, data.batches(rng, ids, batch, context), heads, batch * context


def _leaves(tree):
    if isinstance(tree, dict):
        for k in sorted(tree):
            yield from _leaves(tree[k])
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from _leaves(v)
    else:
        yield np.asarray(tree)


def _nbytes(tree) -> int:
    return sum(a.nbytes for a in _leaves(tree))


def no_compute(params, tokens, targets, heads):
    """A shard's task with the work taken out: the parameters and the shard arrive, a
    gradient of the parameters' shape goes back."""
    return np.float32(0), {k: (np.zeros_like(v) if isinstance(v, np.ndarray)
                               else [{kk: np.zeros_like(vv) for kk, vv in b.items()} for b in v])
                           for k, v in params.items()}


@contextlib.contextmanager
def one_thread():
    """The BLAS and srcad's kernels on one thread, as in each worker process (Dask starts
    them with OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1)."""
    previous = set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        set_num_threads(previous)


def timed(fn, *args) -> tuple[float, object]:
    t0 = time.perf_counter()
    r = fn(*args)
    return time.perf_counter() - t0, r


def measure_model(name, client, n_workers, steps, rng) -> dict:
    """Sharded and single-process step times, alternated (the load drifts), medians."""
    params, stream, heads, tokens_per_step = model(name, rng)
    single = srcad.value_and_grad(gpt.loss, wrt="params", fuse=True)
    step = parallel.value_and_grad(single, batch={"tokens": 0, "targets": 0}, client=client,
                                   shards=n_workers)
    nothing = parallel.Sharded(single, step.batch, n_workers, client, "mean", None)
    probe = parallel.Sharded(single, step.batch, n_workers, client, "mean", None)
    probe.t = _NoCompute(single)
    batches = [next(stream) for _ in range(steps + 2)]
    for tok, tgt in batches[:2]:  # (warm: build, kernels, every worker's first call)
        single(params, tok, tgt, heads)
        step(params, tok, tgt, heads)
        probe(params, tok, tgt, heads)
    t_single, t_single1, t_sharded, t_comm, t_reduce = [], [], [], [], []
    for tok, tgt in batches[2:]:
        t_single.append(timed(single, params, tok, tgt, heads)[0])
        with one_thread():
            t_single1.append(timed(single, params, tok, tgt, heads)[0])
        t_sharded.append(timed(step, params, tok, tgt, heads)[0])
        t_comm.append(timed(probe, params, tok, tgt, heads)[0])
        results = [single(*part) for _, part in nothing.split([params, tok, tgt, heads])]
        t_reduce.append(timed(step._reduced, results, [1.0 / n_workers] * n_workers)[0])
    shard = step.split([params, *batches[2], heads])[0][1]
    return {
        "model": name, "workers": n_workers, "tokens_per_step": tokens_per_step,
        "params_bytes": _nbytes(params),
        "single_s": float(np.median(t_single)), "sharded_s": float(np.median(t_sharded)),
        "single_1thread_s": float(np.median(t_single1)) if t_single1 else None,
        "comm_s": float(np.median(t_comm)), "reduce_s": float(np.median(t_reduce)),
        # client -> each worker: the parameters and its shard; back: a gradient each
        "bytes_per_step": n_workers * (2 * _nbytes(params) + _nbytes(shard[1:3])),
    }


class _NoCompute:
    """Stands in for the transform in a Sharded: the same tasks, no gradient computed."""

    def __init__(self, t):
        self.params, self.wrt, self.__name__, self.kind = t.params, t.wrt, "no_compute", t.kind

    def bind(self, args, kwargs):
        return list(args)

    def __reduce__(self):
        return (_no_compute_fn, ())

    def __call__(self, *args):
        return no_compute(*args)


def _no_compute_fn():
    return no_compute


def kill_step(client, rng) -> dict:
    """One demo step over 2 workers during which the worker running a shard is killed."""
    params, stream, heads, _ = model("demo", rng)
    single = srcad.value_and_grad(gpt.loss, wrt="params", fuse=True)
    step = parallel.value_and_grad(single, batch={"tokens": 0, "targets": 0}, client=client,
                                   shards=2)
    tok, tgt = next(stream)
    expected = step.local(params, tok, tgt, heads)
    step(params, tok, tgt, heads)
    pids = client.run(os.getpid)
    out = {}

    def run():
        out["t"], out["r"] = timed(step, params, tok, tgt, heads)

    th = threading.Thread(target=run)
    th.start()
    victim = None
    while victim is None and th.is_alive():
        busy = [a for a, keys in client.processing().items() if keys]
        victim = busy[0] if busy else None
    if victim is not None:
        os.kill(pids[victim], signal.SIGKILL)
    th.join()
    same = all(np.array_equal(a, b) for a, b in zip(_leaves(out["r"]), _leaves(expected)))
    client.wait_for_workers(2, timeout=120)
    return {"killed": victim is not None, "step_with_kill_s": out["t"], "bit_equal": same}


def loss_curves(client, rng, steps) -> dict:
    """`steps` Adam steps of the demo sharded over 2 workers, the same with Sharded.local,
    and unsharded: the first two bit for bit, the third within the drift printed."""
    curves = {}
    for how in ("sharded", "local", "single"):
        params, stream, heads, _ = model("demo", np.random.default_rng(7))
        single = srcad.value_and_grad(gpt.loss, wrt="params", fuse=True)
        step = parallel.value_and_grad(single, batch={"tokens": 0, "targets": 0},
                                       client=client, shards=2)
        fn = {"sharded": step, "local": step.local, "single": single}[how]
        opt = srcad.optim.Adam(params, lr=4e-3)
        losses = []
        for _ in range(steps):
            tok, tgt = next(stream)
            loss, grads = fn(params, tok, tgt, heads)
            opt.step(grads)
            losses.append(float(loss))
        curves[how] = losses
    return {"steps": steps, "sharded_equals_local": curves["sharded"] == curves["local"],
            "max_abs_loss_diff_vs_single": max(abs(a - b) for a, b in
                                               zip(curves["sharded"], curves["single"])),
            "curves": curves}


def mpi(n_floats: int, steps: int) -> dict:
    """Set-up, the no-compute step and a killed rank on MPI (2 ranks)."""
    script = ROOT / "bench" / "scaleout_mpi.py"
    out = {}
    for mode in ("overhead", "kill"):
        t0 = time.time()
        try:
            p = subprocess.run(["mpiexec", "-n", "2", sys.executable, str(script),
                                str(n_floats), str(steps), mode], capture_output=True,
                               text=True, timeout=120, check=False)
            rc, stdout, stderr = p.returncode, p.stdout, p.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            out[mode] = {"error": f"{type(e).__name__}: {e}"}
            continue
        lines = [json.loads(s) for s in stdout.splitlines() if s.startswith("{")]
        ready = next((x["ready"] for x in lines if "ready" in x), None)
        step = next((x["step_s"] for x in lines if "step_s" in x), None)
        out[mode] = {"rc": rc, "wall_s": time.time() - t0,
                     "setup_s": None if ready is None else ready - t0,
                     "step_s": None if step is None else float(np.median(step)),
                     "stderr_tail": stderr.strip().splitlines()[-2:] if stderr else []}
    return out


def plot(rows, path) -> str:
    """Speed-up of the sharded step over the single-process step measured beside it (the
    load on this shared machine drifts: only ratios from one run compare)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, name in zip(axes, MODELS):
        mine = [r for r in rows if r["model"] == name]
        if not mine:
            continue
        w = [r["workers"] for r in mine]
        ax.plot(w, [r["single_1thread_s"] / r["sharded_s"] for r in mine], "o-",
                label="sharded vs one process, 1 thread")
        ax.plot(w, [r["single_s"] / r["sharded_s"] for r in mine], "s--",
                label="sharded vs one process, default threads")
        ax.plot(w, [r["single_1thread_s"] / max(r["sharded_s"] - r["comm_s"], 1e-9)
                    for r in mine], "^:", label="same, less the no-compute step")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(w)
        ax.set_xlabel("Dask worker processes (1 thread each)")
        ax.set_ylabel("speed-up over one process (same run)")
        ax.set_title(f"{name} GPT (width, heads, layers) {MODELS[name][:3]}, "
                     f"batch {MODELS[name][4]}", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return str(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run; writes nothing")
    ap.add_argument("--replot", action="store_true", help="only redraw the plot from the JSON")
    args = ap.parse_args()
    if args.replot:
        rows = json.loads((RESULTS / "e11_results.json").read_text())["rows"]
        print(plot(rows, RESULTS / "e11_scaleout.png"))
        return 0
    steps = 3 if args.quick else 15
    rng = np.random.default_rng(0)
    result = {"cpu": cpu(), "rows": []}
    print(f"CPU: {result['cpu']}")
    counts = [1, 2] + [n for n in (4, 8) if n <= (os.cpu_count() or 1)]
    for n in counts:
        t0 = time.perf_counter()
        client = parallel.local_cluster(n)
        client.wait_for_workers(n, timeout=120)
        setup = time.perf_counter() - t0
        try:
            for name in MODELS if not args.quick else ["demo"]:
                row = measure_model(name, client, n, steps if name == "demo" else
                                    max(3, steps // 3), rng)
                row["setup_s"] = setup
                result["rows"].append(row)
                print(f"{name:5s} workers {n}: one process {row['single_s'] * 1e3:7.1f} ms "
                      f"({row['tokens_per_step'] / row['single_s']:8,.0f} tokens/s; 1 thread "
                      f"{row['single_1thread_s'] * 1e3:7.1f} ms)  sharded "
                      f"{row['sharded_s'] * 1e3:7.1f} ms "
                      f"({row['tokens_per_step'] / row['sharded_s']:8,.0f} tokens/s)  "
                      f"no-compute step {row['comm_s'] * 1e3:6.1f} ms  reduce "
                      f"{row['reduce_s'] * 1e3:5.2f} ms  {row['bytes_per_step'] / 1e6:6.2f} "
                      f"MB/step  cluster set-up {setup:4.1f} s", flush=True)
            if n == 2:
                result["kill"] = kill_step(client, rng)
                print(f"dask, a worker killed mid-step: {result['kill']}")
                result["loss_curve"] = loss_curves(client, rng, 5 if args.quick else 20)
                lc = result["loss_curve"]
                print(f"loss curve over {lc['steps']} steps: sharded == local bit for bit: "
                      f"{lc['sharded_equals_local']}; max |loss - unsharded loss| "
                      f"{lc['max_abs_loss_diff_vs_single']:.2e}")
        finally:
            parallel.shutdown(client)
    demo_floats = result["rows"][0]["params_bytes"] // 4
    result["mpi"] = mpi(demo_floats, 10 if args.quick else 50)
    print(f"mpi (2 ranks, the demo's {demo_floats:,} floats): {result['mpi']}")
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "e11_results.json").write_text(json.dumps(result, indent=1) + "\n")
        print(plot(result["rows"], RESULTS / "e11_scaleout.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
