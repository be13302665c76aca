"""Adam's update in C (kernels_c/srcad_optim.h) is bit for bit the numpy statements it replaces.

Every case runs two copies of the same optimiser over the same gradients: one through the C
runtime's `adam_step`, one with the C helper hidden (the numpy statements of Adam._update),
and compares parameters and both moments bitwise after every step. Cases: float32 and
float64; plain Adam, maximize, coupled weight decay (Adam) and decoupled (AdamW); betas with
the lerp's two branches (1 - beta1 below and above 0.5); shapes 0-d, empty, odd lengths,
N-D; special values (NaN, +-inf, -0.0, subnormals, huge) in the gradient (NaN's sign and
payload are not compared, see `_same`); and the cases the
C refuses (a non-contiguous parameter, a gradient that is the parameter, numpy scalars as
hyper-parameters, amsgrad), which must still give the numpy path's bits.
"""

import contextlib

import numpy as np
import pytest

from srcad import build, optim

try:
    build.runtime()
except build.CompilerUnavailable:
    pass
pytestmark = pytest.mark.skipif(build.c_helper("adam_step") is None,
                                reason="the C runtime is not built (no compiler)")


@contextlib.contextmanager
def path(c: bool):
    """Within it, Adam runs through the C helper (c=True) or the numpy statements."""
    real = optim.build.c_helper
    if not c:
        optim.build.c_helper = lambda name: None
    try:
        yield
    finally:
        optim.build.c_helper = real


def _run(cls, kw, params, grads_seq, c: bool, monkeypatch):
    real = build.c_helper
    calls = []

    def helper(name):
        fn = real(name)
        if not c or fn is None:
            return None

        def counted(*a):
            calls.append(name)
            return fn(*a)
        return counted
    monkeypatch.setattr(optim.build, "c_helper", helper)
    ps = {k: v.copy() for k, v in params.items()}
    opt = cls(ps, **kw)
    out = []
    for g in grads_seq:
        opt.step(g)
        out.append(({k: v.copy() for k, v in ps.items()},
                    {k: {n: x.copy() for n, x in st.items() if isinstance(x, np.ndarray)}
                     for k, st in opt.state.items()}))
    monkeypatch.setattr(optim.build, "c_helper", real)
    return out, calls


def _same(a, b):
    """Same dtype, shape and bits -- the sign of zero included -- with NaN matching NaN
    whatever its sign and payload: those are not promised (numpy's loops do not promise them;
    a compiler may swap the operands of a commutative add, and x86 returns the first NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    na, nb = np.isnan(a), np.isnan(b)
    return bool((na == nb).all()) and np.where(na, 0, a).tobytes() == np.where(nb, 0, b).tobytes()


def _check(cls, kw, params, grads_seq, monkeypatch, expect_c=True):
    got, calls = _run(cls, kw, params, grads_seq, True, monkeypatch)
    want, _ = _run(cls, kw, params, grads_seq, False, monkeypatch)
    assert bool(calls) == expect_c, calls
    for (gp, gs), (wp, ws) in zip(got, want):
        for k in wp:
            assert _same(gp[k], wp[k]), k
            for n in ws[k]:
                assert _same(gs[k][n], ws[k][n]), (k, n)


OPTIONS = [
    (optim.Adam, {}),
    (optim.Adam, {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6}),
    (optim.Adam, {"lr": 0.01, "maximize": True}),
    (optim.Adam, {"lr": 0.01, "weight_decay": 0.1}),
    (optim.AdamW, {"lr": 0.01}),
    (optim.AdamW, {"lr": 0.3, "weight_decay": 0.5, "maximize": True}),
    (optim.Adam, {"lr": 0.02, "betas": (0.3, 0.9)}),  # 1 - beta1 = 0.7: the lerp's other branch
    (optim.Adam, {"lr": 2, "betas": (0, 0), "eps": 0}),  # ints, and 1 - beta1 = 1
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls,kw", OPTIONS)
def test_bitwise_equal_to_numpy_statements(cls, kw, dtype, monkeypatch):
    rng = np.random.default_rng(0)
    shapes = {"s": (), "e": (0, 3), "v": (37,), "m": (5, 7), "t": (2, 3, 17)}
    params = {k: rng.standard_normal(s).astype(dtype) for k, s in shapes.items()}
    grads = [{k: (rng.standard_normal(s) * 10.0 ** rng.integers(-3, 3)).astype(dtype)
              for k, s in shapes.items()} for _ in range(6)]
    _check(cls, kw, params, grads, monkeypatch)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the numpy statements' overflow)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values(dtype, monkeypatch):
    info = np.finfo(dtype)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, info.tiny / 4, -info.tiny / 3,
                        info.max, -info.max, 1.0, -1.0, info.eps], dtype=dtype)
    params = {"w": np.linspace(-2, 2, special.size).astype(dtype),
              "z": np.array([0.0, -0.0, info.max, info.tiny / 2] * 3, dtype=dtype)}
    grads = [{"w": special, "z": special[::-1].copy()},
             {"w": special[::-1].copy(), "z": special},
             {"w": np.zeros_like(special), "z": -special}]
    for cls, kw in OPTIONS[:6]:
        _check(cls, kw, params, grads, monkeypatch)


def test_cases_the_c_refuses_give_numpy_bits(monkeypatch):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 8)).astype(np.float32)
    grads = [rng.standard_normal((6, 8)).astype(np.float32) for _ in range(3)]

    # numpy scalars as hyper-parameters (not weak scalars: numpy rounds differently)
    _check(optim.Adam, {"lr": np.float64(0.01)}, {"w": base}, [{"w": g} for g in grads],
           monkeypatch, expect_c=False)
    _check(optim.Adam, {"lr": 0.01, "amsgrad": True}, {"w": base},
           [{"w": g} for g in grads], monkeypatch, expect_c=False)

    # a non-contiguous parameter: the numpy statements update the view in place
    res = []
    for c in (True, False):
        with path(c):
            big = np.arange(96, dtype=np.float32).reshape(6, 16) / 7
            opt = optim.Adam([big[:, ::2]], lr=0.1)
            for g in grads:
                opt.step([g])
            res.append(big)
    assert _same(*res)

    # the gradient is the parameter itself (statements read what earlier ones wrote)
    for cls in (optim.Adam, optim.AdamW):
        res = []
        for c in (True, False):
            with path(c):
                w = base.copy()
                opt = cls([w], lr=0.1, weight_decay=0.3)
                for _ in range(3):
                    opt.step([w])
                res.append(w)
        assert _same(*res)


def test_the_helper_refuses_what_it_does_not_handle():
    step = build.c_helper("adam_step")
    a = np.zeros(4, np.float32)
    coef = (1.0, 0.0, 0.1, 0.999, 0.001, -0.001, 0.03, 1e-8)
    ok = [np.zeros(4, np.float32) for _ in range(4)]
    step(*ok, 0, coef)  # the case it handles
    bad = [
        ([a, np.zeros(4, np.float64), a.copy(), a.copy()], "dtype"),
        ([a, a.copy(), a.copy(), np.zeros(5, np.float32)], "size"),
        ([a, a, a.copy(), a.copy()], "shared memory"),
        ([a, a.copy(), np.zeros(8, np.float32)[::2], a.copy()], "strided"),
        ([np.zeros(4, np.int64), np.zeros(4, np.int64), np.zeros(4, np.int64),
          np.zeros(4, np.int64)], "int"),
        ([a, a.copy(), a.copy(), np.zeros(4, ">f4")], "byte order"),
    ]
    for args, why in bad:
        with pytest.raises(TypeError):
            step(*args, 0, coef)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError):
        step(ro, a.copy(), a.copy(), a.copy(), 0, coef)
    step(a.copy(), ro, a.copy(), a.copy(), 0, coef)  # a read-only gradient is fine
    with pytest.raises(TypeError):
        step(*ok, 0, coef[:7])


def test_one_call_per_step_mixing_handled_refused_and_skipped_leaves(monkeypatch):
    """adam_steps handles the leaves it can; a non-contiguous one and a float16 one go
    through the numpy statements in the same step; a leaf whose gradient is None in some
    steps has its own step count (its own bias corrections)."""
    rng = np.random.default_rng(2)
    big = rng.standard_normal((4, 10)).astype(np.float32)
    params = {"a": rng.standard_normal(7).astype(np.float32), "view": big,
              "h": rng.standard_normal(5).astype(np.float16),
              "b": rng.standard_normal((3, 3))}
    res = []
    for c in (True, False):
        with path(c):
            ps = {k: v.copy() for k, v in params.items()}
            ps["view"] = ps["view"][:, ::3]
            opt = optim.AdamW(ps, lr=0.05, weight_decay=0.2)
            for i in range(5):
                g = {k: rng.standard_normal(v.shape).astype(v.dtype) for k, v in ps.items()}
                if i % 2:
                    g["b"] = None
                opt.step(g)
            res.append({k: v.copy() for k, v in ps.items()})
            assert opt.state["b"]["step"] == 3 and opt.state["a"]["step"] == 5
        rng = np.random.default_rng(2)
        rng.standard_normal((4, 10)), rng.standard_normal(7), rng.standard_normal(5)
        rng.standard_normal((3, 3))
    for k in params:
        assert _same(res[0][k], res[1][k]), k


def test_adam_steps_reports_what_it_did_not_handle():
    steps = build.c_helper("adam_steps")
    coef = (1.0, 0.0, 0.1, 0.999, 0.001, -0.001, 0.03, 1e-8)
    good = [np.ones(3, np.float32) for _ in range(4)]
    strided = np.ones(6, np.float32)[::2]
    before = strided.copy()
    left = steps([(*good, coef), (strided, *[np.ones(3, np.float32) for _ in range(3)], coef),
                  (*[np.ones(2) for _ in range(4)], coef)], 0)
    assert left == [1]
    assert not np.array_equal(good[0], np.ones(3, np.float32))  # the first one was updated
    assert _same(strided, before)  # the refused one untouched
    with pytest.raises(TypeError):
        steps([(*good,)], 0)
    with pytest.raises(TypeError):
        steps((*good, coef), 0)
