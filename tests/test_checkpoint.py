"""srcad.checkpoint: recompute instead of save, bit for bit the same gradients."""

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads
from tests import fixtures_checkpoint as F

rng = np.random.default_rng(0)
H = rng.standard_normal((4, 8))
WS = [rng.standard_normal((8, 8)) * 0.3 for _ in range(9)]


def _equal(a, b):
    if isinstance(a, (list, tuple)):
        return all(_equal(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


@pytest.mark.parametrize("fn", [F.checked, F.checked_global], ids=["inline", "module-level"])
def test_checkpointed_layers_are_bitwise_equal_to_plain(fn):
    assert _equal(srcad.grad(F.plain, wrt=(0, 1))(H, WS), srcad.grad(fn, wrt=(0, 1))(H, WS))


@pytest.mark.parametrize("k", [1, 3, 9])
def test_segment_checkpointing_is_bitwise_equal(k):
    a = srcad.grad(F.unrolled, wrt=(0, 1))(H, WS, k)
    b = srcad.grad(F.sqrt_ck, wrt=(0, 1))(H, WS, k)
    assert _equal(a, b)


def test_straight_line_checkpoint():
    x, W1, W2 = rng.standard_normal((3, 8)), WS[0], WS[1]
    check_grads(F.straight, (x, W1, W2), wrt=(0, 1, 2))


def test_generated_code_says_it_recomputes():
    g = srcad.grad(F.checked, wrt=(0, 1))
    g(H, WS)
    text = srcad.source(g)
    assert "# checkpointed: recompute layer's forward from its inputs" in text
    assert "_, h_saved = layer_fwd(h, W)" in text
    assert "stack_h_saved" not in text  # no residuals are kept across the loop


def test_checkpointing_saves_less():
    plain = srcad.explain(F.unrolled, H, WS, 3, print_report=False).total_bytes
    segmented = srcad.explain(F.sqrt_ck, H, WS, 3, print_report=False).total_bytes
    assert segmented * 2 < plain


def test_checkpoint_outside_differentiation_is_the_function():
    np.testing.assert_array_equal(F.ck_layer(H, WS[0]), F.layer(H, WS[0]))


def test_checkpoint_of_a_numpy_function_is_an_error():
    with pytest.raises(srcad.SrcadError, match="checkpoint"):
        srcad.grad(F.checkpoint_not_a_function)(H)


def test_split_forward_with_a_value_saved_in_a_branch_not_taken():
    out, pullback = srcad.vjp(F.branch_not_taken, np.ones(3), 0)
    dx, dn = pullback(1.0)
    np.testing.assert_array_equal(dx, 2 * np.ones(3))
    assert dn is None


def test_zero_trip_loop_inside_a_called_function():
    dh, dWs = srcad.grad(F.zero_trip_callee, wrt=(0, 1))(np.ones((2, 2)), [np.eye(2)], 0)
    np.testing.assert_array_equal(dh, 2 * np.ones((2, 2)))
    np.testing.assert_array_equal(dWs[0], np.zeros((2, 2)))
