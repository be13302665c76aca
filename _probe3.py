import numpy as np, srcad, textwrap, importlib.util
def attempt(label, body, x):
    src = "import numpy as np, math, operator, statistics\ndef f(x):\n" + textwrap.indent(body, "    ") + "\n"
    path = f"/tmp/census/b_{label}.py"
    open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"b{label}", path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    try:
        g = srcad.grad(m.f)(x)
        return "ok " + str(np.round(g, 4))
    except srcad.SrcadError as e:
        return "REFUSED " + str(e).splitlines()[0][:120]
    except Exception as e:
        return "CRASH " + type(e).__name__ + " " + str(e)[:100]
x = np.array([0.3, 0.7, -0.2])
P = {
 "abs": "return np.sum(abs(x))", "sum": "return sum(x)", "sum_list": "return sum([x[0], x[1]])",
 "min": "return min(x[0], x[1])", "max": "return max(x[0], x[1])", "maxseq": "return max(x)",
 "pow": "return np.sum(pow(x, 2))", "sorted": "return np.sum(np.array(sorted(x)) * np.arange(3))",
 "float": "return float(x[0]) * 2.0", "round": "return np.sum(x * round(2.6))", "divmod": "return divmod(x[0], 0.5)[1]",
 "map": "return sum(map(np.tanh, x))", "reversed": "return sum(reversed(list(x)))", "enumerate": "return sum(v * i for i, v in enumerate(x))",
 "zip": "return sum(a * b for a, b in zip(x, x))", "len": "return np.sum(x) * len(x)", "list": "return np.sum(np.array(list(x)))",
 "tuple": "return np.sum(np.array(tuple(x)))", "all": "return np.sum(x) * all(x > -1)", "any": "return np.sum(x) * any(x > 0)",
 "bool": "return np.sum(x) * bool(x[0] > 0)", "int": "return np.sum(x) * int(x[0] * 10)", "isinstance": "return np.sum(x) * isinstance(x, np.ndarray)",
 "range": "return sum(x[i] for i in range(3))", "filter": "return sum(filter(lambda v: v > 0, x))", "item": "return x.item(0) * 2.0",
 "tolist": "return sum(x.tolist())", "iter": "return next(iter(x))", "next": "return next(iter(x))", "str": "return np.sum(x) * len(str(x))",
 "print": "print(x)\nreturn np.sum(x)", "complex": "return complex(x[0]).real", "hash": "return np.sum(x)*0+hash(3)",
 "callable": "return np.sum(x) * callable(x)", "getattr": "return np.sum(getattr(x, 'T'))",
 "dunder_mul": "return np.sum(x.__mul__(x))", "flat": "return sum(x.flat)", "conj": "return np.sum(x.conj())", "sortm": "y = x.copy()\ny.sort()\nreturn np.sum(y * np.arange(3))",
 "round_m": "return np.sum(x * x.round())", "nditer": "return sum(v for v in np.nditer(x))", "where1": "return np.sum(x[np.where(x > 0)])",
}
for k, b in P.items():
    print(k, attempt(k, b, x))
