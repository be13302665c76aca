"""Code beside tests/test_known_object_tests.py that sets a layer's flag in a function.

knowntests.py `set_in_file` leaves to run a test of an attribute that a function of the
test's or the class's source file sets; so the setters live here, apart from the test
module (whose layers' `trainable` flags no function of its own sets), and so does a program
whose file sets the flag it tests (refused there, not decided).
"""

import numpy as np


def freeze(layer):
    """Set outside any file srcad reads for the test: the call's run-time check catches it."""
    layer.trainable = False


def thaw(layer):
    layer.trainable = True


class Dense:
    def __init__(self, W):
        self.W = W
        self.trainable = True

    def forward(self, x):
        return np.tanh(x @ self.W)


LAYERS = [Dense(np.eye(3)), Dense(np.eye(3))]


def set_by_flag(Ws, x):
    """A loss whose own file has a function setting `.trainable` (freeze above): the test
    `layer.trainable` is left to run, and the stores under it are refused, not guessed."""
    i = 0
    for layer in LAYERS:
        if layer.trainable:
            layer.W = Ws[i]
            i += 1
    h = x
    for layer in LAYERS:
        h = layer.forward(h)
    return np.sum(h ** 2)


class FrameworkLayer:
    """A base class in a file whose functions set `.trainable` (freeze above): a subclass's
    flag, defined anywhere, is left to run."""

    trainable = True


def unbuild(layer):
    """A lazily built layer's flag reset by code srcad does not read
    (tests/test_lazy_build_layers.py)."""
    layer.built = False


class Activated:
    """A layer whose activation is optional (tests/test_decided_tests_changed.py: its test
    of `act` decided in a function of another file)."""

    def __init__(self):
        self.act = None

    def __call__(self, x):
        if self.act is None:
            return x * 2.0
        return self.act(x)
