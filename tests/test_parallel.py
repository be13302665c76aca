"""srcad.parallel on Dask distributed (issue 26): a batch sharded over a local cluster of 2
worker processes gives the single-process gradient -- bit for bit against the same shards
reduced in the same order in one process (`local`), and within the reassociation bound
against one call on the whole batch -- on the zoo's models; a worker killed mid-step costs a
retry, never a shard. Skipped, with the reason, where the `distributed` extra is missing."""

import os
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="the distributed extra is not installed "
    "(pip install -e '.[distributed]')")

import parallel_models as pm

import srcad
from srcad import parallel
from srcad.zoo import gpt, mlp
from srcad.zoo import transformer as T


@pytest.fixture(scope="module")
def client():
    c = parallel.local_cluster(2)
    c.wait_for_workers(2, timeout=60)
    yield c
    parallel.shutdown(c)


def _leaves(tree):
    if isinstance(tree, dict):
        for k in sorted(tree):
            yield from _leaves(tree[k])
    elif isinstance(tree, (tuple, list)):
        for v in tree:
            yield from _leaves(v)
    else:
        yield np.asarray(tree)


def _bit_equal(a, b):
    la, lb = list(_leaves(a)), list(_leaves(b))
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        assert u.dtype == v.dtype and u.shape == v.shape
        assert np.array_equal(u, v)


def _within_reassociation_bound(step, args, sharded, full):
    """|sharded - full| <= 2 gamma_N sum_b |w g_b| elementwise (srcad/parallel.py), with
    the per-example contributions g_b from a 1-example-per-shard split, times a margin of 16
    for the per-example forwards' own rounding (a row's GEMM need not sum alike in a batch
    of another size: OpenBLAS's Haswell SGEMM on a Zen 3 blocks an 8-row product unlike a
    32-row one, which took the float32 GPT to 12.7 times the bare bound, at any thread
    count, where 2 had sufficed on Zen 4's SkylakeX kernels). A wrong gradient is off by
    orders of magnitude more (these differences are ~1e-12 on gradients of ~1e-5)."""
    n = next(iter(args[step.t.params.index(p)].shape[a] for p, a in step.batch.items()))
    per_example = parallel.Sharded(step.t, step.batch, n, None, step.reduce, None)
    parts = per_example.split(list(args))
    terms = [list(_leaves(parallel._scaled(step.t(*part), w))) for w, part in parts]
    checked = 0
    for k, (s, f) in enumerate(zip(_leaves(sharded), _leaves(full))):
        u = np.finfo(f.dtype).eps / 2
        gamma = n * u / (1 - n * u)
        mass = sum(np.abs(t[k].astype(np.float64)) for t in terms)
        diff = np.abs(s.astype(np.float64) - f.astype(np.float64))
        assert np.all(diff <= 16 * 2 * gamma * mass + 4 * np.finfo(f.dtype).tiny), \
            (k, float(np.max(diff / (2 * gamma * mass + np.finfo(f.dtype).tiny))))
        checked += 1
    assert checked


def _gpt():
    rng = np.random.default_rng(1)
    params = gpt.init(rng, vocab=11, d_model=16, n_heads=4, n_layers=2, seq_len=8,
                      dtype=np.float32)
    tokens = rng.integers(0, 11, size=(4, 8))
    return gpt.loss, "params", {"tokens": 0, "targets": 0}, "mean", \
        (params, tokens, np.roll(tokens, -1, axis=1), 4)


def _mlp():
    rng = np.random.default_rng(2)
    return mlp.loss, ("W1", "b1", "W2", "b2"), {"x": 0, "labels_onehot": 0}, "mean", \
        (*mlp.init(rng, 16, 32, 10), *mlp.batch(rng, 6, 16, 10))


def _block():
    rng = np.random.default_rng(3)
    p = T.randomize(rng, T.init(rng, 16, 4))
    x, probe = rng.standard_normal((4, 8, 16)), rng.standard_normal((4, 8, 16))
    return T.block_loss, "p", ["x", "probe"], "sum", (p, x, 4, probe)


@pytest.mark.parametrize("model", [_gpt, _mlp, _block], ids=["gpt", "mlp", "block"])
def test_zoo_gradients_sharded_over_two_workers(client, model):
    fn, wrt, batch, reduce, args = model()
    step = parallel.value_and_grad(fn, wrt=wrt, batch=batch, reduce=reduce, shards=2,
                                   client=client)
    got = step(*args)
    _bit_equal(got, step.local(*args))
    _within_reassociation_bound(step, args, got, srcad.value_and_grad(fn, wrt=wrt)(*args))


def test_uneven_shards_and_fused_kernels(client):
    args = pm.example(n=7, dtype=np.float32)
    step = parallel.grad(pm.mse, wrt=("W", "b"), batch={"x": 0, "y": 0}, shards=2,
                         client=client, fuse=True)
    got = step(*args)
    _bit_equal(got, step.local(*args))
    _within_reassociation_bound(step, args, got, srcad.grad(pm.mse, wrt=("W", "b"))(*args))


def test_bad_batches_are_refused_before_any_work(client):
    W, b, x, y = pm.example(n=4)
    with pytest.raises(srcad.SrcadError, match="both batched and differentiated"):
        parallel.grad(pm.mse, wrt="W", batch=["W"], client=client)
    with pytest.raises(srcad.SrcadError, match="not a parameter"):
        parallel.grad(pm.mse, wrt="W", batch=["z"], client=client)
    step = parallel.grad(pm.mse, wrt="W", batch=["x", "y"], shards=5, client=client)
    with pytest.raises(srcad.SrcadError, match="cannot split a batch of 4 into 5 shards"):
        step(W, b, x, y)
    with pytest.raises(srcad.SrcadError, match="disagree on the batch size"):
        step(W, b, x, y[:3])


def test_an_error_in_a_shard_reaches_the_caller(client):
    step = parallel.grad(pm.mse, wrt="W", batch=["x", "y"], shards=2, client=client)
    W, b, x, y = pm.example(n=4)
    with pytest.raises(srcad.SrcadError, match="floating-point"):
        step(W.astype(int), b, x, y)


def _killed_during_step(client, step, args):
    """Run `step(*args)` in a thread; once a shard runs on a worker, kill that worker's
    process by PID. Returns (the step's result or exception, the killed PID)."""
    pids = client.run(os.getpid)
    out = {}

    def run():
        try:
            out["result"] = step(*args)
        except Exception as e:  # noqa: BLE001  (the test looks at it)
            out["error"] = e

    th = threading.Thread(target=run)
    th.start()
    deadline, victim = time.monotonic() + 30, None
    while victim is None and time.monotonic() < deadline:
        busy = [a for a, keys in client.processing().items()
                if any("shard" in str(k) for k in keys)]
        victim = busy[0] if busy else None
        time.sleep(0.05)
    assert victim is not None, "no shard started"
    time.sleep(0.3)  # (inside the shard's sleep: mid-step)
    os.kill(pids[victim], signal.SIGKILL)
    th.join(120)
    assert not th.is_alive()
    return out, pids[victim]


def test_a_worker_killed_mid_step_costs_a_retry_not_a_shard(client):
    W, b, x, y = pm.example(n=8)
    args = (W, b, x, y, 1.0)
    step = parallel.grad(pm.slow_mse, wrt=("W", "b"), batch=["x", "y"], shards=2,
                         client=client)
    expected = step.local(*args)
    out, pid = _killed_during_step(client, step, args)
    assert "error" not in out, out.get("error")
    _bit_equal(out["result"], expected)
    client.wait_for_workers(2, timeout=60)  # (the nanny restarts it)
    assert pid not in client.run(os.getpid).values()


def test_a_shard_lost_for_good_is_a_clear_error(client):
    scheduler = client.cluster.scheduler
    W, b, x, y = pm.example(n=8)
    step = parallel.grad(pm.slow_mse, wrt="W", batch=["x", "y"], shards=2, client=client)
    allowed, scheduler.allowed_failures = scheduler.allowed_failures, 0
    try:
        out, _ = _killed_during_step(client, step, (W, b, x, y, 1.0))
    finally:
        scheduler.allowed_failures = allowed
    assert isinstance(out.get("error"), srcad.SrcadError), out
    assert "a shard of slow_mse was lost" in str(out["error"])
    client.wait_for_workers(2, timeout=60)


def test_the_demo_trains_sharded_over_the_workers(client, tmp_path, capsys):
    from srcad.cli import demo

    assert demo(steps=3, out_dir=tmp_path, workers=client) == 0
    out = capsys.readouterr().out
    assert "each batch split into 2 shards over 2 Dask worker processes" in out
    line = next(s for s in out.splitlines() if s.startswith("step 1: sharded vs one process"))
    diff = float(line.split("the gradient by at most ")[1].split()[0])
    assert diff < 1e-5  # (float32 parameters ~0.02: a few ulps of the largest terms)
    assert "tokens/s" in out
