"""Every refusal says what is unsupported at the user's line, with a hint that works there
(issue 22, item 5): each program of tests/fixtures_hints.py is refused at the line marked
`# refused here`, with a hint; the program with that hint applied runs, and its gradient
agrees with central differences in source mode, tape mode and fuse=True."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads

from tests import fixtures_hints as m

X = np.array([0.3, -0.8, 0.5, 1.1])

CASES = [
    ("try_block", (X,), "into the else block"),
    ("with_block", (X,), "try/except"),
    ("global_statement", (X,), "as an argument"),
    ("import_inside", (X,), "import at module level"),
    ("set_literal", (X,), "use a tuple"),
    ("walrus", (X,), "on its own line"),
    ("star_params", (X,), "name the parameter"),
    ("recursion", (X,), "as a loop"),
    ("kwargs_in_call", (X.reshape(2, 2),), "keywords one by one"),
    ("library_function", (X,), "numpy function"),
    ("resize_method", (X,), "as an assignment"),  # (x.put is np.put's write: followed)
    ("object_not_followed", (X,), "only through its attributes and methods"),
    ("map_kept_in_a_name", (X,), "[f(v) for v in xs]"),
]
HINTED_ARGS: dict = {}


def _marked_line(fn) -> int:
    """The line of `fn` (or of what it calls in the fixtures) marked `# refused here`."""
    source = inspect.getsource(m)
    first = inspect.getsourcelines(fn)[1]
    lines = source.splitlines()
    marked = [i + 1 for i, text in enumerate(lines) if "# refused here" in text]
    after = [n for n in marked if n >= first]
    return min(after, default=None) if after else None


@pytest.mark.parametrize("name, args, hint", CASES, ids=[c[0] for c in CASES])
def test_refused_at_the_line_with_a_hint(name, args, hint):
    fn = getattr(m, name)
    with pytest.raises(SrcadError) as e:
        srcad.grad(fn)(*args)
    err = e.value
    assert err.filename and err.filename.endswith("fixtures_hints.py"), str(err)
    marked = {_marked_line(fn)}
    if name == "recursion":
        marked.add(inspect.getsourcelines(m.halve)[1] + 3)
    assert err.lineno in marked, (err.lineno, marked, str(err))
    assert err.hint and hint in err.hint, err.hint


@pytest.mark.parametrize("mode", [{}, {"mode": "tape"}, {"fuse": True}],
                         ids=["source", "tape", "fuse"])
@pytest.mark.parametrize("name, args, hint", CASES, ids=[c[0] for c in CASES])
def test_the_hint_applied_runs(name, args, hint, mode):
    hinted = getattr(m, f"{name}_hinted")
    args = HINTED_ARGS.get(name, args)
    check_grads(hinted, args, wrt=0, **mode)


@pytest.mark.parametrize("mode", [{}, {"mode": "tape"}, {"fuse": True}],
                         ids=["source", "tape", "fuse"])
def test_a_default_reading_a_local_runs(mode):
    """`f = lambda v, k=k: ...` in a loop: refused (with a hint) until 2026-12-05 (fourth
    session); its default is read where the lambda is made now, as Python reads it."""
    check_grads(m.default_reads_a_local, (X,), wrt=0, **mode)
    assert srcad.value_and_grad(m.default_reads_a_local)(X)[0] == m.default_reads_a_local(X)
