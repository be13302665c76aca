"""gcode's fast ast helpers answer what copy.deepcopy and ast.walk answer.

`clone` (and `Line.__deepcopy__`, which uses it) replace copy.deepcopy of generated code
in every stage, and `names_loaded` / `names_stored` / `names_mentioned` / `nodes` replace
ast.walk scans: checked here on every expression and statement of srcad's own source
(every node type the project writes) and on a generated gradient's Lines.
"""

from __future__ import annotations

import ast
import copy
import pathlib

import numpy as np
import pytest

import srcad
from srcad.gcode import GFunction, Line, clone, names_loaded, names_mentioned, names_stored, nodes

ROOT = pathlib.Path(srcad.__file__).parent


def _trees():
    for path in sorted(ROOT.rglob("*.py")):
        yield ast.parse(path.read_text(), filename=str(path))


def _sample():
    """Statements and expressions of srcad's source (a sample of each file's nodes)."""
    for tree in _trees():
        seen = 0
        for n in ast.walk(tree):
            if isinstance(n, (ast.stmt, ast.expr)):
                seen += 1
                if seen % 7 == 0:
                    yield n


def _same(a, b) -> bool:
    return ast.dump(a, include_attributes=True) == ast.dump(b, include_attributes=True)


def _fresh(a, b) -> bool:
    """No node of `b` is a node of `a`."""
    ids = {id(n) for n in ast.walk(a)}
    return not any(id(n) in ids for n in ast.walk(b) if not isinstance(n, ast.expr_context))


@pytest.mark.slow  # (every node of srcad's own source: ~10 s; `-m slow`)
def test_clone_is_deepcopy_on_srcad_source():
    n = 0
    for node in _sample():
        got, want = clone(node), copy.deepcopy(node)
        assert _same(got, want) and _same(got, node)
        assert _fresh(node, got)
        n += 1
    assert n > 1000


def test_clone_keeps_extra_attributes_and_mutable_values():
    e = ast.parse("f(x, [1, 2])", mode="eval").body
    e.note = ["a", ast.Name("y", ast.Load())]  # not a field: deepcopy copies it all the same
    e.args.append(ast.Constant(value=np.arange(3)))
    got = clone(e)
    assert got.note == ["a", got.note[1]] and got.note is not e.note
    assert got.note[1] is not e.note[1] and got.note[1].id == "y"
    assert got.args[2].value is not e.args[2].value
    assert np.array_equal(got.args[2].value, e.args[2].value)


def test_clone_shares_what_was_shared_and_takes_a_memo():
    x = ast.Name("x", ast.Load())
    e = ast.BinOp(left=x, op=ast.Mult(), right=x)  # one node reached twice
    got, want = clone(e), copy.deepcopy(e)
    assert got.left is got.right and want.left is want.right and got.left is not x
    # deepcopy's memo idiom (srcad/lower/assemble.py): a node mapped in the memo is replaced
    y = ast.Name("y", ast.Load())
    got = clone(e, {id(x): y})
    assert got.left is y and got.right is y
    lst = [e, e]
    out = clone(lst)
    assert out[0] is out[1] and out[0] is not e


def test_line_deepcopy_is_the_default_deepcopy():
    shared = ast.parse("a = b + c").body[0]
    inner = Line(shared, 3)
    loop = Line(ast.parse("for i in range(3): pass").body[0], 2, body=[inner, Line(comment="c")])
    f = GFunction("f", ["b", "c"], [loop, Line(shared, 4, keep=True)])
    got = copy.deepcopy(f)
    assert got.body[0].body[0].node is got.body[1].node  # sharing across Lines kept
    assert got.body[1].node is not shared and _same(got.body[1].node, shared)
    assert got.body[1].keep and got.body[0].body[1].comment == "c"
    assert got.body[0].body[0] is not inner and got.body[0].line == 2


@pytest.mark.slow  # (every node of srcad's own source: ~10 s; `-m slow`)
def test_name_sets_are_ast_walks():
    for tree in _trees():
        for n in ast.walk(tree):
            if not isinstance(n, (ast.stmt, ast.expr)):
                continue
            walked = list(ast.walk(n))
            names = [m for m in walked if isinstance(m, ast.Name)]
            assert names_mentioned(n) == {m.id for m in names}
            assert names_loaded(n) == {m.id for m in names if isinstance(m.ctx, ast.Load)}
            assert names_stored(n) == {m.id for m in names if isinstance(m.ctx, ast.Store)}
            mine = list(nodes(n))
            assert len(mine) == len(walked) and {id(m) for m in mine} == \
                {id(m) for m in walked}


@pytest.mark.parametrize("fuse", [False, True])
def test_generated_lines_copy_alike(fuse):
    """The copies a stage makes of a whole generated program: the same code either way."""
    from srcad.codegen import render_function
    from srcad.zoo import transformer

    rng = np.random.default_rng(0)
    p = transformer.init(rng, 16, 2)
    x = rng.standard_normal((2, 4, 16))
    g = srcad.grad(transformer.block_loss, wrt=(0, 1), fuse=fuse)
    g(p, x, 2, x)
    functions = g._last.program.functions
    mine = copy.deepcopy(functions)
    # the same copy made the generic way: Line's own __deepcopy__ out of the way
    generic = [GFunction(f.name, list(f.params), _generic(f.body), f.doc) for f in functions]
    for a, b, c in zip(mine, generic, functions):
        assert render_function(a) == render_function(b) == render_function(c)
        assert _dumps(a.body) == _dumps(b.body) == _dumps(c.body)
        assert not {id(ln.node) for ln in _lines(a.body)} & {id(ln.node) for ln in _lines(c.body)
                                                             if ln.node is not None}


def _generic(lines):
    return None if lines is None else [
        Line(copy.deepcopy(ln.node), ln.line, ln.comment, _generic(ln.body), _generic(ln.orelse),
             ln.keep) for ln in lines]


def _lines(lines):
    for ln in lines:
        yield from ln.walk()


def _dumps(lines):
    return [(ln.line, ln.comment, ln.keep, ln.compound,
             None if ln.node is None else ast.dump(ln.node, include_attributes=True))
            for ln in _lines(lines)]


# -- templates.subst: one walk, the same tree as a NodeTransformer over a deepcopy ----------------

class _OldSubst(ast.NodeTransformer):
    """subst as it was: deepcopy the template, then replace names in place."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Subscript(self, node):
        node.value = self.visit(node.value)
        sl = node.slice
        if isinstance(sl, ast.Name) and sl.id in self.mapping:
            node.slice = self.mapping[sl.id](True)
        else:
            node.slice = self.visit(sl)
        return node

    def visit_Name(self, node):
        if node.id in self.mapping and isinstance(node.ctx, ast.Load):
            return self.mapping[node.id](False)
        return node


def _old_subst(template, mapping):
    from srcad.transform.templates import atom_expr

    def maker(v):
        if isinstance(v, ast.AST):
            return lambda in_sub: copy.deepcopy(v)
        return lambda in_sub: atom_expr(v, in_subscript=in_sub)

    return _OldSubst({k: maker(v) for k, v in mapping.items()}).visit(copy.deepcopy(template))


def _values():
    """What a template's names are bound to: names, literals, index atoms (subscript-aware),
    sequences, and expressions."""
    from srcad import ir
    from srcad.gcode import parse_expr
    yield lambda k: ir.Var(f"v_{k}")
    yield lambda k: ir.Const(2.5, "2.5")
    yield lambda k: ir.Index((ir.Slice(None, ir.Const(3, "3"), None), ir.Var("i")), True)
    yield lambda k: ir.Index((ir.Const(None, "None"),), False)
    yield lambda k: ir.Seq((ir.Var("a"), ir.Const(1, "1")), "list")
    yield lambda k: parse_expr(f"(g_{k} * 2)[..., None]")


@pytest.mark.slow  # (every node of srcad's own source: ~10 s; `-m slow`)
def test_subst_is_the_old_subst_on_every_rule():
    from srcad.ops import table
    from srcad.transform.templates import subst

    n = 0
    for op in table.all_ops():
        templates = [op.spelling] + [r.expr for r in op.vjps if r is not None]
        templates.append(ast.parse("x[y] + x[y, 1] + out.T * g", mode="eval").body)
        for template in templates:
            if not isinstance(template, ast.AST):
                continue
            names = sorted(names_mentioned(template)) + ["g", "out"]
            for make in _values():
                mapping = {k: make(k) for k in names}
                before = ast.dump(template, include_attributes=True)
                got, want = subst(template, mapping), _old_subst(template, mapping)
                assert ast.dump(got, include_attributes=True) == \
                    ast.dump(want, include_attributes=True), (op.name, ast.unparse(template))
                assert ast.dump(template, include_attributes=True) == before  # untouched
                assert _fresh(template, got)
                n += 1
    assert n > 500


# -- lower/match.py's row-method index is kept per table generation ------------------------------

def test_row_methods_follow_the_table():
    """`_row_methods` is cached until a registration changes the table: a user's row with
    `c_row` appears in it, and is gone again after `unregister`."""
    from srcad.lower import match
    from srcad.ops import unregister

    fresh = match._row_methods()
    assert match._row_methods() is fresh and "prod" not in fresh and "sum" in fresh
    try:
        op = srcad.defvjp(np.prod, lambda g, out, a, axis=None, keepdims=False: g,
                          c_row="sum")
        assert match._row_methods().get("prod") is op
    finally:
        unregister(np.prod)
    assert "prod" not in match._row_methods() and match._row_methods() == fresh
