import numpy as np, srcad, math, operator, statistics, builtins, types, textwrap, importlib.util, sys, os
def pub(mod):
    return sorted(n for n in dir(mod) if not n.startswith('_') and callable(getattr(mod,n)) and not isinstance(getattr(mod,n), types.ModuleType))
res = {}
def attempt(label, body, x):
    src = "import numpy as np, math, operator, statistics\ndef f(x):\n" + textwrap.indent(body, "    ") + "\n"
    path = f"/tmp/census/p_{abs(hash(label))}.py"
    open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"p{abs(hash(label))}", path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    try:
        g = srcad.grad(m.f)(x)
        h = 1e-6
        num = (m.f(x + h) - m.f(x - h)) / (2*h) if np.ndim(x)==0 else None
        return "ok" + ("" if num is None else f" g={float(np.sum(g)):.4g} num={float(num):.4g}")
    except srcad.SrcadError as e:
        return "REFUSED " + str(e).splitlines()[0][:110]
    except Exception as e:
        return "CRASH " + type(e).__name__ + " " + str(e)[:100]
for n in pub(math):
    print("math."+n, attempt(n, f"return float(math.{n}(float(np.sum(x))))", np.float64(0.3)))
for n in pub(operator):
    print("operator."+n, attempt(n, f"return np.sum(operator.{n}(x, x))", np.float64(0.3)))
for n in pub(statistics):
    print("statistics."+n, attempt(n, f"return statistics.{n}([x, x * 2.0, x + 1.0])", np.float64(0.3)))
