"""Arrays written in place while something else holds them (issue 21, session of 2026-12-04,
sixth; two probes of 244 programs in the styles of optimiser and simulation code): the
pieces of `np.split` / `hsplit` / `vsplit` / `dsplit` / `array_split` and the rows `a, b = B`
unpacks (views into the array), `y.view()`, an array stored into a list or dict in a loop
and written in place in a later trip (`L[t] = x; x *= 2`, `traj.append(x); x += v`), an item
of a list appended to another (`for p in ps: saved.append(p)`, then `ps[0] *= 3`), and a
list of an array's rows (`[W[i] for i in range(2)]`, then `rows[0] *= 3`). Source mode
returned Python's value only where the write did not matter -- 7 + 3 of these programs gave
a wrong value and gradient on 32a7752 (the tape 2 wrong, 1 crash) -- and now refuses each at
the write, naming the holder; tape mode, whose Tensors are Python's objects, runs the
container ones right. Every program must give Python's value and the central-difference
gradient, or a SrcadError; the ones tape mode must get right are `TAPE_RIGHT`."""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


def split_pieces_written(x):
    y = x * 1.0
    a, b = np.split(y, 2)
    a += b
    return np.sum(y * y)


def hsplit_pieces_written(x):
    y = x * 1.0
    a, b = np.hsplit(y, 2)
    a *= 3.0
    return np.sum(y * y)


def array_split_piece_written(x):
    y = x * 1.0
    pieces = np.array_split(y, 3)
    pieces[1] -= 0.5 * pieces[0][0]
    return np.sum(y ** 3)


def vsplit_piece_written(x):
    y = np.stack([x, 2.0 * x])
    top, bottom = np.vsplit(y, 2)
    top *= 3.0
    return np.sum(y * y)


def unpacked_rows_written(x):
    B = np.stack([x, x * x])
    a, b = B
    a *= 3.0
    return np.sum(B)


def unpacked_slice_rows_written(x):
    B = np.stack([x, x * x, x + 1.0])
    a, b = B[:2]
    b *= 3.0
    return np.sum(B * B)


def view_method_written(x):
    y = x * 1.0
    z = y.view()
    z[1] = 0.0
    return np.sum(y ** 2)


def stored_in_a_list_then_written_later(x):
    h = x * 1.0
    L = [None, None]
    for t in range(2):
        h *= 2.0
        L[t] = h
    return np.sum(L[0] * L[1])


def stored_in_a_dict_then_written_later(x):
    h = x * 1.0
    d = {}
    for t in range(2):
        h *= 2.0
        d[t] = h
    return np.sum(d[0] + d[1] * d[1])


def trajectory_appended_then_written(x):
    p = x * 1.0
    traj = []
    for _ in range(3):
        p += 0.5 * x
        traj.append(p)
    return np.sum(np.array(traj) ** 2)


def items_appended_then_written_through_the_list(x):
    ps = [x.copy(), x * 2.0]
    saved = []
    for p in ps:
        saved.append(p)
    ps[0] *= 3.0
    return np.sum(saved[0] * saved[1])


def rows_of_an_array_listed_then_written(x):
    W = np.stack([x, x])
    rows = [W[i] for i in range(2)]
    rows[0] *= 3.0
    return np.sum(W * W)


def fresh_array_each_trip_stored(x):
    # (a control: a new array each trip, filled, then stored -- no sharing; right in both)
    xs = {}
    total = 0.0
    for t in range(3):
        xs[t] = np.zeros(4)
        xs[t][t] = 1.0
        total = total + np.sum(xs[t] * x)
    return total + np.sum(xs[0] * xs[2])


def buffer_copied_into_not_held(x):
    # (a control: `fast[:] = slow` copies slow into an array, which holds nothing)
    slow = x * 1.0
    fast = slow.copy()
    for _ in range(2):
        fast -= 0.1 * fast ** 2
        slow += 0.5 * (fast - slow)
        fast[:] = slow
    return np.sum(slow ** 2)


PROGRAMS = [split_pieces_written, hsplit_pieces_written, array_split_piece_written,
            vsplit_piece_written, unpacked_rows_written, unpacked_slice_rows_written,
            view_method_written, stored_in_a_list_then_written_later,
            stored_in_a_dict_then_written_later, trajectory_appended_then_written,
            items_appended_then_written_through_the_list, rows_of_an_array_listed_then_written,
            fresh_array_each_trip_stored, buffer_copied_into_not_held]
TAPE_RIGHT = {"stored_in_a_list_then_written_later", "stored_in_a_dict_then_written_later",
              "trajectory_appended_then_written", "items_appended_then_written_through_the_list",
              "fresh_array_each_trip_stored", "buffer_copied_into_not_held"}
SOURCE_RIGHT = {"fresh_array_each_trip_stored", "buffer_copied_into_not_held"}
X = np.array([0.7, -1.1, 0.4, 1.3])


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_written_while_held(fn, mode):
    want_v = fn(X.copy())
    want = numerical_grad(fn, [X.copy()])
    try:
        v, g = srcad.value_and_grad(fn, mode=mode)(X.copy())
    except srcad.SrcadError:
        must = TAPE_RIGHT if mode == "tape" else SOURCE_RIGHT
        assert fn.__name__ not in must, f"{fn.__name__} refused in {mode} mode"
        return
    np.testing.assert_allclose(v, want_v, rtol=1e-10, atol=1e-12)
    assert rel_error(g, want) < 1e-6, (g, want)
