"""scipy.special's functions on differentiated values (srcad/ops/special.py): each against
central differences and torch (torch.special where torch has the function), reverse (source
and tape, bit for bit equal) and forward, float32 and float64, one broadcast case per binary
function, one second-order case each; the spellings people write (``from scipy.special
import expit``, ``sps.logsumexp(x, axis=1)``); scipy stays optional.

The op table's grids (tests/test_ops.py, test_tape.py, test_forward.py,
test_ops_second_order.py) run each row's own ``test_cases`` too; these add the torch oracle
(tests/special_twins.py) and the user-facing spellings.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

sps = pytest.importorskip("scipy.special")
torch = pytest.importorskip("torch")

import special_twins
from scipy.special import expit, logsumexp

import srcad
from srcad.testing import check_grads, check_jvp, random_args

ANY, POS, UNIT = (-2.0, 2.0), (0.5, 2.0), (0.1, 0.9)


# --- the functions, as users write them ----------------------------------------------------------
def f_expit(x):
    return expit(x) * 2.0


def f_log_expit(x):
    return sps.log_expit(x)


def f_softplus(x):
    return sps.softplus(x) * 1.5


def f_logit(x):
    return sps.logit(x)


def f_erf(x):
    return sps.erf(x)


def f_erfc(x):
    return sps.erfc(x)


def f_ndtr(x):
    return sps.ndtr(x)


def f_log_ndtr(x):
    return sps.log_ndtr(x)


def f_gammaln(x):
    return sps.gammaln(x)


def f_digamma(x):
    return sps.psi(x)


def f_polygamma(x):
    return sps.polygamma(1, x)


def f_entr(x):
    return sps.entr(x)


def f_betaln(a, b):
    return sps.betaln(a, b)


def f_xlogy(x, y):
    return sps.xlogy(x, y)


def f_xlog1py(x, y):
    return sps.xlog1py(x, y)


def f_logsumexp(x):
    return sps.logsumexp(x, axis=1)


def f_logsumexp_b(x, b):
    return logsumexp(x, axis=0, b=b, keepdims=True)


def f_softmax(x):
    return sps.softmax(x, axis=-1)


def f_log_softmax(x):
    return sps.log_softmax(x, axis=1)


W = special_twins.TWINS  # torch's functions (torch.special where torch has them)
# name: (function, shapes, domain, torch twin)
CASES = {
    "expit": (f_expit, [(3, 4)], ANY, lambda x: W["special_expit"](x) * 2.0),
    "log_expit": (f_log_expit, [(5,)], ANY, W["special_log_expit"]),
    "softplus": (f_softplus, [(3, 4)], ANY, lambda x: W["special_softplus"](x) * 1.5),
    "logit": (f_logit, [(5,)], UNIT, W["special_logit"]),
    "erf": (f_erf, [(3, 4)], ANY, W["special_erf"]),
    "erfc": (f_erfc, [(5,)], ANY, W["special_erfc"]),
    "ndtr": (f_ndtr, [(5,)], ANY, W["special_ndtr"]),
    "log_ndtr": (f_log_ndtr, [(5,)], (-6.0, 2.0), W["special_log_ndtr"]),
    "gammaln": (f_gammaln, [(3, 4)], POS, W["special_gammaln"]),
    "digamma": (f_digamma, [(5,)], POS, W["special_digamma"]),
    "polygamma": (f_polygamma, [(5,)], POS, lambda x: W["special_polygamma"](1, x)),
    "entr": (f_entr, [(5,)], POS, W["special_entr"]),
    "betaln": (f_betaln, [(3, 1), (4,)], (POS, POS), W["special_betaln"]),
    "xlogy": (f_xlogy, [(3, 1), (4,)], (ANY, POS), W["special_xlogy"]),
    "xlog1py": (f_xlog1py, [(3, 4), (4,)], (ANY, (-0.5, 2.0)), W["special_xlog1py"]),
    "logsumexp": (f_logsumexp, [(3, 4)], ANY,
                  lambda x: W["special_logsumexp"](x, axis=1)),
    "logsumexp_b": (f_logsumexp_b, [(3, 4), (4,)], (ANY, POS),
                    lambda x, b: W["special_logsumexp"](x, axis=0, b=b, keepdims=True)),
    "softmax": (f_softmax, [(3, 4)], ANY, lambda x: W["special_softmax"](x, axis=-1)),
    "log_softmax": (f_log_softmax, [(3, 4)], ANY,
                    lambda x: W["special_log_softmax"](x, axis=1)),
}
TOL = {"float32": 2e-3, "float64": 1e-6}


def _args(name, dtype):
    fn, shapes, domain, _ = CASES[name]
    return fn, random_args(shapes, dtype, rng=len(name), domain=domain)


def _projection(fn, args):
    out = fn(*args)
    return np.random.default_rng(1).standard_normal(np.shape(out)).astype(np.result_type(out))


def _torch_vjp(twin, args, p):
    ts = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in args]
    out = twin(*ts)
    grads = torch.autograd.grad(out, ts, torch.tensor(np.asarray(p, dtype=np.float64)))
    return [g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vjp_against_torch_and_differences(name, dtype):
    """The pullback, source and tape (bit for bit), against torch and central differences."""
    fn, args = _args(name, dtype)
    p = _projection(fn, args)
    out, pullback = srcad.vjp(fn, *args)
    np.testing.assert_array_equal(out, fn(*args))
    got = pullback(p)
    _, tape_pullback = srcad.vjp(fn, *args, mode="tape")
    for g, t, a in zip(got, tape_pullback(p), args):
        assert g.shape == a.shape and g.dtype == a.dtype, (g.shape, g.dtype, a.shape)
        np.testing.assert_array_equal(g, t)
    for g, want in zip(got, _torch_vjp(CASES[name][3], args, p)):
        np.testing.assert_allclose(g, want, rtol=TOL[dtype], atol=TOL[dtype])
    check_grads(_scalar_loss(fn, p, len(args)), args, wrt=tuple(range(len(args))),
                tol=TOL[dtype], grad_fn=lambda *xs: srcad.vjp(fn, *xs)[1](p))


# forward mode: every function in float64; float32 (a float32 tangent) for one of each shape
# of rule -- the op-table grids (tests/test_forward.py) run each row's cases too
_JVP = [(n, "float64") for n in sorted(CASES)] + [
    (n, "float32") for n in ("digamma", "expit", "logsumexp_b", "softmax", "xlogy")]


@pytest.mark.parametrize("name, dtype", _JVP)
def test_jvp_against_differences(name, dtype):
    fn, args = _args(name, dtype)
    check_jvp(fn, args, rng=3, tol=TOL[dtype])


def _scalar_loss(fn, p, n):
    """np.sum(fn(...) * p) with n named parameters (srcad differentiates no *args)."""
    if n == 1:
        def loss(x):
            return np.sum(fn(x) * p)
    else:
        def loss(x, y):
            return np.sum(fn(x, y) * p)
    return loss


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_order(name):
    """Reverse over reverse: the gradient of <grad loss, q> (= H q), against central
    differences of srcad's own gradient."""
    fn, args = _args(name, "float64")
    n = len(args)
    grad = srcad.grad(_scalar_loss(fn, _projection(fn, args), n), wrt=tuple(range(n)))
    q = [np.random.default_rng(2).standard_normal(np.shape(a)) for a in args]
    q0, q1 = q[0], q[-1]
    if n == 1:
        def projected(x):
            return np.sum(grad(x)[0] * q0)
    else:
        def projected(x, y):
            gx, gy = grad(x, y)
            return np.sum(gx * q0) + np.sum(gy * q1)
    check_grads(projected, args, wrt=tuple(range(n)), tol=1e-5)


def test_hessian_vector_product_forward_over_reverse():
    x = random_args([(3, 4)], "float64", rng=0, domain=ANY)[0]

    def loss(x):
        return np.sum(sps.logsumexp(x, axis=1)) + np.sum(sps.erf(x) * sps.log_softmax(x, axis=0))

    v = np.random.default_rng(4).standard_normal(x.shape)
    _, hv = srcad.jvp(srcad.grad(loss), (x,), (v,))
    g = srcad.grad(loss)
    h = 1e-5
    np.testing.assert_allclose(hv, (g(x + h * v) - g(x - h * v)) / (2 * h), rtol=1e-5,
                               atol=1e-7)


# --- spellings and the machinery ---------------------------------------------------------------
def from_import_inside(x):
    from scipy.special import logsumexp as lse
    return np.sum(lse(x, axis=0) * sps.expit(x[0]))


def test_spellings_agree():
    """`from scipy.special import ...`, the module alias and an import inside the function."""
    x = random_args([(3, 4)], "float64", rng=5, domain=ANY)[0]

    def by_module(x):
        return np.sum(sps.logsumexp(x, axis=0) * sps.expit(x[0]))

    want = srcad.grad(by_module)(x)
    np.testing.assert_array_equal(srcad.grad(from_import_inside)(x), want)
    np.testing.assert_array_equal(srcad.grad(from_import_inside, mode="tape")(x), want)


def test_generated_code_names_the_function():
    def loss(x):
        return np.sum(sps.gammaln(x))

    src = srcad.source(srcad.grad(loss))
    assert "special_gammaln(x)" in src and "special_digamma(x)" in src
    assert "from srcad.runtime import" in src


def test_a_users_rule_wins_and_unregisters():
    x = np.linspace(-1.0, 1.0, 4)

    def loss(x):
        return np.sum(sps.expit(x))

    srcad.defvjp(sps.expit, lambda g, out, x: g * 0 + 7.0, spelling="special_expit(x)")
    try:
        np.testing.assert_array_equal(srcad.grad(loss)(x), np.full(4, 7.0))
    finally:
        srcad.ops.unregister(sps.expit)
    assert srcad.ops.lookup(sps.expit) is srcad.ops.by_name("special_expit")
    s = expit(x)
    np.testing.assert_allclose(srcad.grad(loss)(x), s * (1 - s), rtol=1e-12)


def test_return_sign_is_refused():
    def loss(x):
        out, _sign = sps.logsumexp(x, return_sign=True)
        return out

    with pytest.raises(srcad.SrcadError, match="return_sign"):
        srcad.grad(loss)(np.ones(3))


_WITHOUT_SCIPY = textwrap.dedent("""
    import sys
    tried = []

    class Block:  # scipy is not installed, as far as this process can tell
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "scipy":
                tried.append(name)
                raise ImportError("no scipy here")

    sys.meta_path.insert(0, Block())
    import numpy as np
    import srcad

    def loss(x):
        return np.sum(np.tanh(x) ** 2)

    x = np.linspace(-1.0, 1.0, 5)
    g = srcad.grad(loss)(x)
    assert np.allclose(g, 2 * np.tanh(x) * (1 - np.tanh(x) ** 2))
    assert not tried, tried  # importing srcad and differentiating never looked for scipy
    names = [op.name for op in srcad.ops.all_ops()]
    assert tried and "special_expit" not in names and "tanh" in names
    print("ok")
""")


@pytest.mark.slow
def test_scipy_stays_optional(tmp_path):
    """srcad imports and differentiates without scipy (a fresh process: ~4 s)."""
    script = tmp_path / "without_scipy.py"
    script.write_text(_WITHOUT_SCIPY)
    root = str(pathlib.Path(srcad.__file__).parents[1])
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=False, timeout=120, cwd=root, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_importing_srcad_does_not_import_scipy():
    """srcad/ops/special.py and srcad/runtime_special.py name scipy only inside functions."""
    import ast

    root = pathlib.Path(srcad.__file__).parent
    for path in (root / "ops" / "special.py", root / "runtime_special.py"):
        tree = ast.parse(path.read_text())
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [a.name for n in top for a in n.names] + [n.module or "" for n in top
                                                          if isinstance(n, ast.ImportFrom)]
        assert not any(m.split(".")[0] == "scipy" for m in names), (path, names)
