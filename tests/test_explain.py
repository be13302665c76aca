"""srcad.explain reports exactly what the backward keeps."""

import numpy as np

import srcad
from tests import fixtures_explain as F


def test_loop_that_needs_nothing_saved_keeps_nothing(capsys):
    rep = srcad.explain(F.decay, np.ones(1000), 50)
    assert rep.total_bytes == 0
    assert all(item.kind == "argument" for item in rep.items)
    assert "total (excluding arguments): 0 bytes" in capsys.readouterr().out


def test_rnn_keeps_one_state_per_step():
    rng = np.random.default_rng(0)
    h0, W, xs = rng.standard_normal((4, 8)), rng.standard_normal((8, 8)), rng.standard_normal(
        (7, 4, 8))
    rep = srcad.explain(F.rnn, h0, W, xs, wrt=(0, 1), print_report=False)
    stacks = [i for i in rep.items if i.kind.startswith("stack")]
    assert [s.name for s in stacks] == ["stack_h"]
    assert stacks[0].kind == "stack (7 items)"
    # the first pushed state is the argument h0 (not a copy): 6 new states of 4x8 float64
    assert stacks[0].nbytes == 6 * 4 * 8 * 8
    final = {i.name: i for i in rep.items}["h"]
    assert final.shape == (4, 8) and final.nbytes == 4 * 8 * 8
    assert rep.total_bytes == 7 * 4 * 8 * 8


def test_explain_of_a_grad_uses_its_wrt():
    x, W = np.ones((2, 3)), np.ones((3, 4))
    rep = srcad.explain(srcad.grad(F.straight, wrt="W"), x, W, print_report=False)
    names = {i.name: i for i in rep.items}
    assert names["x"].kind == "argument"  # dW = x.T @ ... needs x
    assert "W" not in names  # dx is not asked for, so W is not needed
    assert names["h"].nbytes == 2 * 4 * 8 and names["h"].origin.endswith("fixtures_explain.py:19")
