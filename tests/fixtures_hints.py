"""Programs srcad refuses, each next to the same program with the refusal's hint applied
(tests/test_hints_work.py). A line marked `# refused here` is the one the refusal must name."""

import contextlib
import math

import numpy as np

SCALE = 2.0


# 1. an effect in a try body (run twice) -> "move it out of the try body: into the else block"
def try_block(x):
    try:
        y = np.tanh(x)
        print("tanh done")  # refused here
    except ValueError:
        y = x
    return np.sum(y * y)


def try_block_hinted(x):
    try:
        y = np.tanh(x)
    except ValueError:
        y = x
    else:
        print("tanh done")
    return np.sum(y * y)


# 2. `with contextlib.suppress(...)` (a try/except) -> "write the try/except it stands for"
def with_block(x):
    with contextlib.suppress(FloatingPointError):  # refused here
        y = np.log(x * x + 1.0)
    return np.sum(y)


def with_block_hinted(x):
    y = np.log(x * x + 1.0)
    return np.sum(y)


# 3. a nested function reading a global the function assigns -> "pass it as an argument"
LENGTH = None


def global_statement(x):
    global LENGTH
    LENGTH = x.shape[0]
    scaled = lambda v: v * LENGTH  # refused here  # noqa: E731
    return np.sum(scaled(x) * x)


def global_statement_hinted(x):
    global LENGTH
    LENGTH = x.shape[0]
    scaled = lambda v, n: v * n  # noqa: E731
    return np.sum(scaled(x, LENGTH) * x)


# 4. a relative import inside -> "import at module level" (an absolute one is read as the
# call would: tests/test_imports_inside.py)
def import_inside(x):
    from .fixtures_hints import SCALE as s  # refused here
    return np.sum(np.sin(x) * s)


def import_inside_hinted(x):
    return np.sum(np.sin(x) * SCALE * math.pi)


# 5. a set display outside a test -> "use a tuple"
def set_literal(x):
    rows = {0, 2}  # refused here
    return np.sum(x[sorted(rows)] ** 2)


def set_literal_hinted(x):
    rows = (0, 2)
    return np.sum(x[list(rows)] ** 2)


# 6. `:=` -> "assign on its own line"
def walrus(x):
    if np.sum(x) > -10.0 and (n := np.sum(x * x)) > 0:  # refused here
        return n * 2.0
    return np.sum(x)


def walrus_hinted(x):
    n = np.sum(x * x)
    if np.sum(x) > -10.0 and n > 0:
        return n * 2.0
    return np.sum(x)


# 7. a position among *args -> "name the parameter"
def star_params(*xs):  # refused here
    return np.sum(xs[0] * xs[0])


def star_params_hinted(x):
    return np.sum(x * x)


# 8. recursion whose depth hangs on a computed value -> "write the recursion as a loop"
# (one whose depth an int argument or a list's length fixes is followed: tests/test_forms23.py)
def halve(x):
    if np.sum(x * x) < 0.1:
        return np.sum(x * x)
    return halve(x * 0.5)  # refused here


def recursion(x):
    return halve(x)


def recursion_hinted(x):
    for _ in range(2):
        x = x * 0.5
    return np.sum(x * x)


# 9. **kwargs in a call -> "pass keywords one by one"
def kwargs_in_call(x):
    opts = {"axis": 0}
    return np.sum(np.sum(x * x, **opts))  # refused here


def kwargs_in_call_hinted(x):
    return np.sum(np.sum(x * x, axis=0))


# 10. a library function with no rule -> "... or use the numpy function"
_square = np.frompyfunc(lambda v: v * v, 1, 1)  # (numpy calls the lambda: srcad cannot see it)


def library_function(x):
    return np.sum(_square(x).astype(float))  # refused here


def library_function_hinted(x):
    return np.sum(np.square(x))


# 11. an in-place method srcad does not follow -> "write the change as an assignment"
def resize_method(x):
    b = np.sin(x)
    b.resize((2, 2))  # refused here
    return np.sum(b * b[::-1])


def resize_method_hinted(x):
    b = np.sin(x)
    b = np.resize(b, (2, 2))
    return np.sum(b * b[::-1])


# 12. a built object used in a way not followed -> "use it only through its attributes and
#     methods here"
class Scale:
    def __init__(self, w):
        self.w = w

    def me(self, v):  # (one of two objects returned, picked by the data: not followed; a
        if np.sum(v) > 0:  # method's one `return self` is, as an estimator's fit)
            return self
        return Scale(self.w * 2.0)

    def apply(self, x):
        return x * self.w


def object_not_followed(x):
    s = Scale(x)  # refused here
    return np.sum(s.me(x).apply(x))


def object_not_followed_hinted(x):
    s = Scale(x)
    return np.sum(s.apply(x))


# 14. a map kept in a name (lazy: srcad follows a map only where it is consumed) -> "[f(v) for v
# in xs]"
def map_kept_in_a_name(x):
    squashed = map(np.tanh, x)  # refused here
    return sum(squashed) * x[0]


def map_kept_in_a_name_hinted(x):
    squashed = [np.tanh(v) for v in x]
    return sum(squashed) * x[0]


# 15. a nested function's default reading a local -> "pass it as an argument"
def default_reads_a_local(x):
    total = 0.0
    for k in range(3):
        f = lambda v, k=k: np.sum(np.tanh(v) * (k + 1))  # (followed since 2026-12-05)  # noqa: E731
        total = total + f(x)
    return total


def default_reads_a_local_hinted(x):
    total = 0.0
    for k in range(3):
        f = lambda v, k: np.sum(np.tanh(v) * (k + 1))  # noqa: E731
        total = total + f(x, k)
    return total
