"""User-facing errors: every unsupported construct or misuse raises `srcad.SrcadError`.

The message names the user's file, the line and the offending source line (each function
below marks its offending line with ``# ERR``), and says what to do instead. No internal
exception type (KeyError, AttributeError, ...) may reach the user.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os

import corpus_straight as C
import numpy as np
import pytest

import srcad
from srcad.errors import NonScalarOutputError, NoRuleError, UnsupportedSyntaxError

HERE = os.path.abspath(__file__)
X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def err_line(fn) -> tuple[int, str]:
    """(line number, stripped text) of the line of fn marked `# ERR`."""
    lines, first = inspect.getsourcelines(fn)
    marked = [(first + i, ln) for i, ln in enumerate(lines) if "# ERR" in ln]
    assert len(marked) == 1, f"{fn.__name__} must mark exactly one line with # ERR"
    lineno, text = marked[0]
    return lineno, text.strip()


def assert_points_at(err: srcad.SrcadError, fn, filename: str = HERE):
    lineno, text = err_line(fn)
    msg = str(err)
    assert os.path.basename(filename) in msg, msg
    assert f"line {lineno}" in msg, msg
    assert text in msg, msg
    assert err.lineno == lineno


def raises_at(fn, *args, cls=srcad.SrcadError, transform=None, **kw):
    """Transform fn and call it; return the SrcadError after checking where it points."""
    transform = transform or srcad.grad
    with pytest.raises(cls) as info:
        transform(fn, **kw)(*args)
    assert_points_at(info.value, fn)
    return info.value


# -- unsupported constructs --------------------------------------------------------------------


def uses_try(x):  # (a try works; an effect in its body, which srcad runs twice, does not)
    try:
        y = np.sin(x)
        print("sin")  # ERR
    except ValueError:
        y = x
    return np.sum(y)


def uses_with(x):
    with contextlib.suppress(ValueError):  # ERR  (a try/except: refused with that hint)
        y = np.log(x)
    return np.sum(y)


def uses_class(x):
    class Box:  # ERR  (its body reads x: made anew at every call, not once)
        held = x
    return np.sum(Box.held)


def uses_decorated_nested_def(x):
    @staticmethod  # ERR
    def inner(v):
        return v
    return np.sum(x)


def uses_bare_raise(x):
    if x.ndim == 0:
        raise  # ERR  # noqa: PLE0704
    return np.sum(x)


def uses_raise_from(x):
    if x.ndim == 0:
        raise ValueError("scalar") from None  # ERR
    return np.sum(x)


def uses_nested_name_clash(x):
    def inner(v):  # ERR
        return v * 2
    inner = 3.0
    return np.sum(x) * inner


_CALLS = 0


def uses_global(x):
    global _CALLS
    _CALLS = _CALLS + 1
    scale = lambda v: v * _CALLS  # ERR  (would read the count from before the call)  # noqa: E731
    return np.sum(scale(x))


def uses_nonlocal_factory():
    def uses_nonlocal(x):
        k = 2.0

        def bump():
            nonlocal k
            k = k + 1.0
            return k
        return np.sum(x * k) * (x.ndim > 0 and bump())  # ERR  (Python may not call it)

    return uses_nonlocal


uses_nonlocal = uses_nonlocal_factory()


def uses_varargs(*xs):  # ERR
    return np.sum(xs[0])


def uses_star_call(x):
    shape = (3, 2)
    return np.sum(np.reshape(x, *shape))  # ERR


async def uses_async(x):  # ERR
    return np.sum(x)


def uses_yield(x):
    yield np.sum(x)  # ERR


def uses_del(x):
    y = x * 2
    del y  # only frees memory: srcad accepts it (generated code uses it)
    return np.sum(x)


UNSUPPORTED = [uses_try, uses_with, uses_class,
               uses_global, uses_nonlocal, uses_varargs, uses_star_call, uses_async,
               uses_yield, uses_decorated_nested_def, uses_bare_raise, uses_raise_from,
               uses_nested_name_clash]


@pytest.mark.parametrize("fn", UNSUPPORTED, ids=lambda f: f.__name__)
def test_unsupported_construct_points_at_line(fn):
    err = raises_at(fn, X)
    assert err.hint or "instead" in str(err) or "use" in str(err)


@pytest.mark.parametrize("fn", [uses_try, uses_decorated_nested_def, uses_global],
                         ids=lambda f: f.__name__)
def test_unsupported_raises_at_transform_time_as_unsupported_syntax(fn):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcad.grad(fn)
    assert_points_at(info.value, fn)


def test_lambda_with_no_source_is_refused():
    f = eval("lambda x: np.sum(x)", {"np": np})  # noqa: S307
    with pytest.raises(srcad.SrcadError, match="source"):
        srcad.grad(f)(X)


def test_not_a_function():
    for obj in (np.tanh, math.exp, 3, "f", object()):
        with pytest.raises(srcad.SrcadError):
            srcad.grad(obj)(X)


# -- calls without a derivative rule -----------------------------------------------------------


def calls_eig(A):  # (np.linalg.qr, once here, has a row now; eig is complex-valued)
    _w, v = np.linalg.eig(A)  # ERR
    return np.sum(v)


def calls_python_function(x):  # (np.polyfit, np.histogram2d, np.apply_over_axes: rules now)
    return np.sum(np.frompyfunc(lambda v: v * 2, 1, 1)(x).astype(float))  # ERR


def calls_math_remainder(x):
    return math.remainder(x, 0.7)  # ERR


def calls_unknown_method(x):
    return x.getfield(np.float64).sum()  # ERR


@pytest.mark.parametrize("fn, arg, name", [
    (calls_eig, np.eye(3) * 2.0, "eig"),
    (calls_python_function, X, "frompyfunc"),
    (calls_math_remainder, 0.5, "remainder"),
    (calls_unknown_method, X, "getfield"),
], ids=["np.linalg.eig", "python_function", "math.remainder", "method"])
def test_unknown_call_names_function_and_defvjp(fn, arg, name):
    err = raises_at(fn, arg, cls=NoRuleError)
    msg = str(err)
    assert name in msg
    assert "srcad.defvjp" in msg


# -- misuse of the API ---------------------------------------------------------------------------


def vector_out(x):
    return np.tanh(x) * 2  # ERR


def test_non_scalar_output_mentions_vjp():
    for transform in (srcad.grad, srcad.value_and_grad):
        with pytest.raises(NonScalarOutputError) as info:
            transform(vector_out)(X)
        assert "vjp" in str(info.value)
        assert_points_at(info.value, vector_out)


def none_out(x):
    y = np.sum(x)  # noqa: F841
    return None  # ERR  # noqa: RET501, PLR1711


def test_none_output_is_an_error():
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(none_out)(X)
    assert_points_at(info.value, none_out)


def two_args(x, y):
    return np.sum(x * y)


def test_wrong_wrt_name():
    with pytest.raises(srcad.SrcadError, match="'z'") as info:
        srcad.grad(two_args, wrt="z")(X, X)
    assert "x" in str(info.value) and "y" in str(info.value)


@pytest.mark.parametrize("wrt", [2, -3, (0, 5)])
def test_out_of_range_wrt(wrt):
    with pytest.raises(srcad.SrcadError, match="out of range"):
        srcad.grad(two_args, wrt=wrt)(X, X)


@pytest.mark.parametrize("wrt", [1.0, None, True, ("x", "x"), ()])
def test_bad_wrt_values(wrt):
    with pytest.raises(srcad.SrcadError):
        srcad.grad(two_args, wrt=wrt)(X, X)


def int_arg(x, n):
    return np.sum(x * n)


@pytest.mark.parametrize("n", [3, np.arange(3), np.int32(2), True], ids=repr)
def test_grad_wrt_integer_argument(n):
    with pytest.raises(srcad.SrcadError, match="`n`") as info:
        srcad.grad(int_arg, wrt="n")(X, n)
    assert "float" in str(info.value)
    assert os.path.basename(HERE) in str(info.value)


def test_unknown_option():
    with pytest.raises(srcad.SrcadError, match="option"):
        srcad.grad(two_args, nonsense=1)


def test_wrong_number_of_arguments():
    with pytest.raises(srcad.SrcadError):
        srcad.grad(two_args)(X)
    with pytest.raises(srcad.SrcadError):
        srcad.grad(two_args)(X, X, X)


def test_vjp_cotangent_shape():
    _, pullback = srcad.vjp(vector_out, X)
    with pytest.raises(srcad.SrcadError, match="shape"):
        pullback(np.ones(3))


# -- numpy errors in the user's code ------------------------------------------------------------


def shape_mismatch(x, W):
    h = np.tanh(x)
    return np.sum(h @ W)  # ERR


def broadcast_mismatch(x, y):
    z = x + y  # ERR
    return np.sum(z)


@pytest.mark.parametrize("fn, args", [
    (shape_mismatch, (X, np.ones((4, 2)))),
    (broadcast_mismatch, (X, np.ones(4))),
], ids=["matmul", "broadcast"])
def test_numpy_error_names_user_line(fn, args):
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(fn)(*args)
    assert_points_at(info.value, fn)
    assert isinstance(info.value.__cause__, ValueError)


# -- nothing internal escapes --------------------------------------------------------------------


def odd_identity(x):
    return x


def odd_constant(x):
    return 3.0


def odd_unused(x, y):
    return np.sum(y)


def odd_int_return(x):
    return len(x)


def odd_tuple_return(x):
    return x, x


def odd_none_return(x):
    return None


def odd_only_docstring(x):
    """No return."""


def odd_shape_of(x):
    return x.shape[0] * np.sum(x)


def odd_index_scalar(x):
    return x[0, 0] * x[-1, -1]


def odd_bool_mask(x):
    return np.sum(x[x > 0])


def odd_comparison_out(x):
    return np.sum(x) > 0


def odd_reverse_pow(x):
    return np.sum(2.0 ** x)


def odd_abs_builtin(x):
    return np.sum(abs(x))


def odd_attr_size(x):
    return np.sum(x) / x.size + x.ndim


def odd_chained_assign(x):
    a = b = x
    return np.sum(a * b)


def odd_walrus_like(x):
    y = np.sum(x)
    y = y  # noqa: PLW0127
    return y


def odd_subscript_assign(x):
    y = np.zeros(3)
    y[0] = np.sum(x)
    return np.sum(y)


def odd_kwargs_call(x):
    return np.sum(x, **{"axis": 0}).sum()  # noqa: PIE804


def odd_unknown_keyword(x):
    return np.sum(x, axes=0)


def odd_attr_unknown(x):
    return np.sum(x.real)


def odd_undefined_name(x):
    return np.sum(x * undefined_thing)  # noqa: F821


def odd_local_call(x):
    f = np.sum
    return f(x)


def odd_module_value(x):
    return np.sum(x * np.pi) + np.e


def odd_int_div(x):
    return np.sum(x) / 3 + np.sum(x) // 1


def odd_chained_compare(x):
    return np.sum(0 < x < 1)


def odd_string_const(x):
    return np.sum(np.asarray(x, dtype="float64"))


def odd_float32_int_div(x):
    return np.sum(x) / (3 * 2)


ODD = [
    (odd_identity, (X,)), (odd_identity, (np.float64(2.0),)), (odd_constant, (X,)),
    (odd_unused, (X, X)), (odd_int_return, (X,)), (odd_tuple_return, (X,)),
    (odd_none_return, (X,)), (odd_only_docstring, (X,)), (odd_shape_of, (X,)),
    (odd_index_scalar, (X,)), (odd_bool_mask, (X,)), (odd_comparison_out, (X,)),
    (odd_reverse_pow, (X,)), (odd_abs_builtin, (X,)), (odd_attr_size, (X,)),
    (odd_chained_assign, (X,)), (odd_walrus_like, (X,)), (odd_subscript_assign, (X,)),
    (odd_kwargs_call, (X,)), (odd_unknown_keyword, (X,)), (odd_attr_unknown, (X,)),
    (odd_undefined_name, (X,)), (odd_local_call, (X,)), (odd_module_value, (X,)),
    (odd_int_div, (X,)), (odd_chained_compare, (X,)), (odd_string_const, (X,)),
    (odd_float32_int_div, (X.astype(np.float32),)),
    # odd inputs to ordinary functions
    (two_args, (X, 2.0)), (two_args, (np.zeros((0, 3)), np.zeros((0, 3)))),
    (two_args, (np.float64(1.5), np.float64(2.0))), (two_args, (1.5, 2.0)),
    (two_args, ([1.0, 2.0], [3.0, 4.0])), (two_args, (None, X)), (two_args, ("a", X)),
    (two_args, (X.astype(np.complex128), X)), (two_args, (X.astype(np.float16), X)),
    (two_args, (X.astype(np.int64), X)), (two_args, (X[:, ::2], X[:, 1:])),
    (two_args, (np.asfortranarray(X), X)), (C.mlp2_tanh, (X, X, X, X, X, X)),
    (C.xent_gather, (np.ones((3, 4)), np.ones(4), np.ones((2, 3)), np.array([0.0, 1.0]))),
    (C.xent_gather, (np.ones((3, 4)), np.ones(4), np.ones((2, 3)), np.array([0, 9]))),
]

# known bugs outside the frontend: (index into ODD, kind) -> reason
ODD_XFAIL: dict = {}


def _odd_params():
    for kind in ("grad", "value_and_grad", "vjp"):
        for i, (fn, args) in enumerate(ODD):
            reason = ODD_XFAIL.get((i, kind))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(fn, args, kind, id=f"{kind}-{i}-{fn.__name__}", marks=marks)


def _own_error(fn, args):
    """The exception type fn(*args) itself raises, or None."""
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("fn, args, kind", list(_odd_params()))
def test_no_internal_exception_escapes(fn, args, kind):
    """A result, a SrcadError, or the very error the user's function raises on these inputs."""
    try:
        if kind == "vjp":
            out, pullback = srcad.vjp(fn, *args)
            pullback(np.ones_like(np.asarray(out)))
        else:
            getattr(srcad, kind)(fn)(*args)
    except srcad.SrcadError as e:
        assert str(e)
    except Exception as e:
        if type(e) is not _own_error(fn, args):
            raise


def test_del_is_accepted_and_changes_nothing():
    np.testing.assert_array_equal(srcad.grad(uses_del)(X), np.ones_like(X))
