import numpy as np, srcad
def f1(x): return np.sum(x) * np.count_nonzero(x > 0)
def f2(x): return np.sum(np.where(np.isclose(x, 0.3), 0.0, x))
def f3(x): return np.sum(x * np.rint(x))
def f4(x): return np.sum(x[np.argwhere(x > 0)])
def f5(x): return np.sum(x) * np.signbit(x[0])
for f in (f1, f2, f3, f4, f5):
    try: print(f.__name__, srcad.grad(f)(np.array([0.3, 0.7, -0.2])))
    except srcad.SrcadError as e: print(f.__name__, "REFUSED", str(e).splitlines()[0][:100])
