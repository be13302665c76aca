"""A library call or an in-place method that changes a differentiated array through one of
its arguments, or through a view expression (`y[0].sort()`, `rng.shuffle(y)`), is followed
or refused at the user's line -- never a silent wrong gradient (issue 21, soundness as a
rule: a call with no rule that may change an array the output reads is refused, the array
reached through its views too; `v.sort()` / `v.fill(c)` / `v.partition(k)` on a subscript
or `.T` of the function's array are lowered through a name holding the view)."""

import numpy as np
import pytest

import srcad

from tests import fixtures_library_writes as F
import inspect

X = np.random.default_rng(0).standard_normal((3, 4)) * 0.5


def _central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


FOLLOWED = [F.sort_a_row_in_place, F.fill_a_row, F.partition_a_row, F.sort_the_transpose,
            F.sort_a_fancy_copy, F.sort_a_column_of_a_view, F.shuffled_by_an_index,
            F.shuffle_of_plain_indices, F.print_and_sort_a_copy]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", FOLLOWED, ids=lambda f: f.__name__)
def test_followed_as_numpy_does(fn, mode, capsys):
    value, g = srcad.value_and_grad(fn, mode=mode)(X.copy())
    assert value == fn(X.copy())
    np.testing.assert_allclose(g, _central(fn, X.copy()), rtol=1e-6, atol=1e-7)
    if mode == "source":
        assert np.array_equal(g, srcad.grad(fn, mode="tape")(X.copy()))


REFUSED = [F.generator_shuffle, F.generator_shuffle_of_a_row, F.legacy_shuffle_of_a_row]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
def test_a_shuffle_of_a_differentiated_array_is_refused_at_its_line(fn, mode):
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(fn, mode=mode)(X.copy())
    err = info.value
    lines, first = inspect.getsourcelines(fn)
    want = first + next(i for i, ln in enumerate(lines) if "# ERR" in ln)
    assert err.filename == inspect.getsourcefile(fn) and err.lineno == want, str(err)
    assert "permutation" in (err.hint or "")
