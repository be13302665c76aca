"""Second derivatives by reverse over reverse, through a loop.

    python -m srcad show examples/second_order.py:spring --wrt k --order 2

`srcad.grad(srcad.grad(spring))` differentiates the generated gradient of `spring` again: the
stacks that gradient keeps for its loop get stacks of cotangents (srcad/transform/stacks.py).
"""

import numpy as np


def spring(k, x, v, n):
    """n explicit Euler steps of a unit mass on a spring of stiffness k; the final energy."""
    for i in range(n):
        a = -k * np.sin(x)
        x = x + 0.1 * v
        v = v + 0.1 * a
    return 0.5 * v * v + k * (1.0 - np.cos(x))


def _example_spring():
    return 2.0, 0.5, 0.0, 8


EXAMPLES = {"spring": _example_spring}
