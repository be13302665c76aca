"""Data-parallel gradients over worker processes, on Dask distributed: `srcad.parallel`.

A batch is split along a named axis of chosen arguments into `shards` contiguous pieces; each
piece's gradient is computed on a worker by the same transformed function (it travels by
reference: srcad/transformed.py `Transformed.__reduce__`), and the pieces are reduced in this
process in shard order, always the same order, so a step's result does not depend on which
worker finished first.

    from srcad import parallel
    from srcad.zoo import gpt
    step = parallel.value_and_grad(gpt.loss, wrt="params", batch={"tokens": 0, "targets": 0},
                                   shards=2, client=2)      # 2: a local cluster of 2 processes
    loss, grads = step(params, tokens, targets, 4)          # as value_and_grad(gpt.loss) would
    step.close()                                            # (the cluster it started)

Exactness. `step(...)` equals `step.local(...)` bit for bit: `local` computes the same shards
one after another in this process and reduces them in the same order (the same generated code
on the same values; worker processes run numpy with one BLAS thread, whose GEMMs sum in the
same order as with more). Against the gradient of the whole batch in one call (`srcad.grad(f)`)
it is equal only up to reassociation: the batch sum of per-example contributions is split
into per-shard sums, then added across shards (times n_k / N for reduce="mean", exact when
the shards are equal and their count a power of two). Each of the two is within
gamma_N * sum_b |w * g_b| of the exact sum (gamma_N = N u / (1 - N u), u the unit roundoff
of the dtype, N the batch size), so they differ by at most twice that, elementwise.

The engine is imported only when a parallel function is first made (the `distributed` extra:
`pip install 'srcad[distributed]'`); srcad's core never imports it.
"""

from __future__ import annotations

import itertools
import uuid

import numpy as np

from .errors import SrcadError
from .transformed import Transformed

INSTALL_HINT = "install the extra: pip install 'srcad[distributed]' (Dask distributed)"


def _engine():
    """The `distributed` module (Dask), imported on first use: an optional dependency."""
    try:
        import distributed
    except ImportError:
        raise SrcadError("srcad.parallel runs on Dask distributed, which is not installed",
                         hint=INSTALL_HINT) from None
    return distributed


def local_cluster(workers: int):
    """A `distributed.Client` on a new cluster of `workers` local processes, one thread each
    (the caller closes it: `client.close(); client.cluster.close()`, or `shutdown(client)`)."""
    d = _engine()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise SrcadError(f"a local cluster needs a positive number of workers, got {workers!r}")
    cluster = d.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                             dashboard_address=None)
    return d.Client(cluster)


def shutdown(client) -> None:
    """Close a client made by `local_cluster` and its cluster."""
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def _shard_step(t: Transformed, values: list):
    """What a worker runs for one shard: the transformed function on the shard's arguments."""
    return t(*values)


class Sharded:
    """A transformed function whose batch is split over workers (see the module docstring)."""

    def __init__(self, t: Transformed, batch, shards, client, reduce: str, timeout):
        self.t = t
        if reduce not in ("mean", "sum"):
            raise SrcadError(f"reduce must be 'mean' or 'sum', got {reduce!r}",
                             hint="'mean': the loss is a mean over the batch; 'sum': a sum")
        self.reduce = reduce
        self.batch = self._resolve_batch(batch)
        if shards is not None and (isinstance(shards, bool) or not isinstance(shards, int)
                                   or shards < 1):
            raise SrcadError(f"shards must be a positive int, got {shards!r}")
        self.shards = shards
        self.timeout = timeout
        self._client_spec = client
        self._client = None
        self._owned = False

    def _resolve_batch(self, batch) -> dict:
        """{parameter name: axis} from a dict of names or positions to axes, or a list of
        names or positions (axis 0)."""
        if isinstance(batch, (str, int)):
            batch = [batch]
        items = batch.items() if isinstance(batch, dict) else [(b, 0) for b in batch or ()]
        out = {}
        for p, axis in items:
            if isinstance(p, int) and not isinstance(p, bool) and \
                    -len(self.t.params) <= p < len(self.t.params):
                p = self.t.params[p]
            if p not in self.t.params:
                raise SrcadError(f"batch names {p!r}, which is not a parameter of "
                                 f"{self.t.__name__} ({', '.join(self.t.params)})")
            if isinstance(axis, bool) or not isinstance(axis, int):
                raise SrcadError(f"the batch axis of {p!r} must be an int, got {axis!r}")
            if p in self.t.wrt:
                raise SrcadError(
                    f"`{p}` is both batched and differentiated: its gradient would be a "
                    f"concatenation over shards, not a sum", hint="batch the data arguments, "
                    "differentiate the parameters")
            out[p] = axis
        if not out:
            raise SrcadError("batch= names no argument to split",
                             hint="e.g. batch={'x': 0, 'y': 0}: the arguments and their "
                             "batch axis")
        return out

    # -- the engine ----------------------------------------------------------------------------
    @property
    def client(self):
        """The Dask client (connected, or its local cluster started, on first use)."""
        if self._client is None:
            d = _engine()
            spec = self._client_spec
            if isinstance(spec, d.Client):
                self._client = spec
            elif isinstance(spec, int) and not isinstance(spec, bool):
                self._client, self._owned = local_cluster(spec), True
            elif isinstance(spec, str):
                self._client, self._owned = d.Client(spec), True
            elif spec is None:
                try:
                    self._client = d.get_client()
                except ValueError:
                    raise SrcadError("srcad.parallel found no Dask client",
                                     hint="pass client= a distributed.Client, a scheduler "
                                     "address, or a number of local worker processes") from None
            else:
                raise SrcadError(f"client must be a distributed.Client, an address or a "
                                 f"number of workers, got {spec!r}")
        return self._client

    def close(self) -> None:
        """Close the client and local cluster this function started (not one passed in)."""
        if self._client is not None and self._owned:
            shutdown(self._client)
        self._client, self._owned = None, False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- splitting and reducing ----------------------------------------------------------------
    def split(self, values: list) -> list[tuple[float, list]]:
        """The shards of one call's arguments: (weight, arguments) each, in order, the batched
        arguments cut into contiguous pieces (sizes differ by at most one), the others
        shared. Weight n_k / N for reduce="mean", 1 for "sum"."""
        sizes = {}
        for p, axis in self.batch.items():
            v = values[self.t.params.index(p)]
            if not isinstance(v, np.ndarray) or not -v.ndim <= axis < v.ndim:
                raise SrcadError(f"batched argument `{p}` must be an array with an axis "
                                 f"{axis}, got {type(v).__name__} of shape {np.shape(v)}")
            sizes[p] = v.shape[axis]
        if len(set(sizes.values())) != 1:
            raise SrcadError(f"the batched arguments disagree on the batch size: {sizes}")
        n = next(iter(sizes.values()))
        shards = self.shards or len(self.client.scheduler_info()["workers"])
        if self.shards is None:
            self.shards = shards  # (fixed from now on: the shards decide the result's bits)
        if not 1 <= shards <= n:
            raise SrcadError(f"cannot split a batch of {n} into {shards} shards",
                             hint="use at most as many shards as the batch has examples")
        bounds = np.cumsum([0] + [n // shards + (k < n % shards) for k in range(shards)])
        out = []
        for lo, hi in itertools.pairwise(bounds):
            part = list(values)
            for p, axis in self.batch.items():
                i = self.t.params.index(p)
                cut = [slice(None)] * values[i].ndim
                cut[axis] = slice(int(lo), int(hi))
                part[i] = np.ascontiguousarray(values[i][tuple(cut)])
            out.append((1.0 if self.reduce == "sum" else (hi - lo) / n, part))
        return out

    def _reduced(self, results: list, weights: list):
        """Σ_k w_k r_k over the shards in order (((w0 r0 + w1 r1) + w2 r2) + ...), over the
        result's structure (tuples, lists, dicts of arrays)."""
        if len(results) != len(weights):  # (never silently drop a shard)
            raise SrcadError(f"{len(results)} shard results for {len(weights)} shards")
        total = _scaled(results[0], weights[0], copy=True)  # (owned: added into in place)
        for r, w in zip(results[1:], weights[1:]):
            total = _added(total, _scaled(r, w))
        return total

    def local(self, *args, **kwargs):
        """The same shards, computed one after another in this process and reduced in the same
        order: the single-process reference `__call__` equals bit for bit."""
        parts = self._parts(args, kwargs)
        return self._reduced([self.t(*part) for _, part in parts], [w for w, _ in parts])

    def _parts(self, args, kwargs):
        return self.split(self.t.bind(args, kwargs))

    def __call__(self, *args, **kwargs):
        d = _engine()
        parts = self._parts(args, kwargs)
        client = self.client
        step = uuid.uuid4().hex[:12]
        # each shard's arguments travel inside its task, so the scheduler can run it again on
        # another worker if its worker dies (data scattered to a worker dies with it)
        futures = [client.submit(_shard_step, self.t, part, key=f"srcad-{step}-shard-{k}",
                                 pure=False) for k, (_, part) in enumerate(parts)]
        try:
            if self.timeout is not None:
                d.wait(futures, timeout=self.timeout)
            results = client.gather(futures)
        except d.KilledWorker as e:
            raise SrcadError(
                f"a shard of {self.t.__name__} was lost: every worker that ran it died "
                f"({e}); the step was not completed",
                hint="the scheduler retries a shard on the remaining workers up to "
                "distributed.scheduler.allowed-failures times; look for what kills them "
                "(memory?)") from None
        except TimeoutError:
            unfinished = [k for k, f in enumerate(futures) if not f.done()]
            raise SrcadError(f"shards {unfinished} of {self.t.__name__} did not finish within "
                             f"{self.timeout} s (workers now: "
                             f"{len(client.scheduler_info()['workers'])})",
                             hint="check that the cluster has workers") from None
        finally:
            for f in futures:
                f.release()
        return self._reduced(results, [w for w, _ in parts])

    def __repr__(self):
        return (f"<srcad.parallel {self.t.kind} of {self.t.__name__} wrt "
                f"{', '.join(self.t.wrt)}, batch {self.batch}, shards {self.shards}>")


def _scaled(r, w: float, copy: bool = False):
    """w * r over r's structure (r itself for w == 1, unless `copy`)."""
    if w == 1.0 and not copy:
        return r
    if isinstance(r, dict):
        return {k: _scaled(v, w, copy) for k, v in r.items()}
    if isinstance(r, (tuple, list)):
        return type(r)(_scaled(v, w, copy) for v in r)
    if r is None:
        return None
    if w == 1.0:
        return np.array(r, copy=True) if isinstance(r, np.ndarray) else r
    return r * w  # (a Python float: the array keeps its dtype)


def _added(a, b):
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            raise SrcadError("shards returned gradients of different structures")
        return {k: _added(a[k], b[k]) for k in a}
    if isinstance(a, (tuple, list)):
        if type(a) is not type(b) or len(a) != len(b):
            raise SrcadError("shards returned gradients of different structures")
        return type(a)(_added(u, v) for u, v in zip(a, b))
    if a is None:
        return None
    if isinstance(a, np.ndarray) and a.shape == np.shape(b) and \
            np.result_type(a, b) == a.dtype:
        a += b  # (the same sum as a + b, without a new array per shard)
        return a
    return a + b


def grad(fn, wrt=0, *, batch, shards: int | None = None, client=None, reduce: str = "mean",
         timeout: float | None = None, **options) -> Sharded:
    """The gradient of `fn` (as `srcad.grad(fn, wrt, **options)`), its batch split over
    `shards` workers: `batch` names the arguments to split and their axis ({"x": 0, "y": 0},
    or a list of names for axis 0); `reduce` says whether fn's loss is a "mean" or a "sum"
    over the batch. `client`: a distributed.Client, a scheduler address, a number of local
    worker processes to start, or None for the current default client. `shards`: fixed at the
    number of workers on the first call when not given. `timeout`: seconds a step may take."""
    t = fn if isinstance(fn, Transformed) and fn.kind == "grad" and not options else \
        Transformed(fn, "grad", wrt, options)
    return Sharded(t, batch, shards, client, reduce, timeout)


def value_and_grad(fn, wrt=0, *, batch, shards: int | None = None, client=None,
                   reduce: str = "mean", timeout: float | None = None, **options) -> Sharded:
    """Like `grad`, returning (value, gradient), the value reduced as the gradient is."""
    t = fn if isinstance(fn, Transformed) and fn.kind == "value_and_grad" and not options \
        else Transformed(fn, "value_and_grad", wrt, options)
    return Sharded(t, batch, shards, client, reduce, timeout)
