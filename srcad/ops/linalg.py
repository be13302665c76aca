"""Linear algebra: matmul (`@`), dot and outer, for 1-D, 2-D and batched operands.

Why the backward of a matmul is two matmuls: C = A B, C_ij = sum_k A_ik B_kj, so
dL/dA_ik = sum_j G_ij B_kj = (G B^T)_ik and dL/dB_kj = sum_i A_ik G_ij = (A^T G)_kj.
The runtime helpers handle 1-D promotion and batch broadcasting through one expression per
shape class (`runtime_linalg.matmul_grad_form`), which the specialiser writes into generated
code once shapes are known: for 2-D operands the two matmuls themselves, and where one operand
has no batch (N-D @ 2-D, as every ``x @ W`` of a model) ONE 2-D GEMM on reshaped operands,
whose contraction also sums over the batch: ``dW = x.reshape(512, 128).T @ g.reshape(512,
512)``, not a batched product and a sum (2-3x faster on the Transformer block's shapes; that
gradient's summation order differs from the batched one's in the last bits). The forward of
N-D @ 2-D is one 2-D GEMM too, ``(x.reshape(512, 128) @ W).reshape((8, 64, 512))``, for
large matrices where the row's `forward_form` finds it bitwise equal to numpy's loop of
per-matrix GEMMs with this process's BLAS (probed once per shape; generated code and tape
mode both run what it answers). `np.dot` is matmul for 1-D and 2-D operands, but contracts
a's last axis with b's second-to-last for N-D b (no batch broadcasting) and multiplies when
either operand is 0-d.
"""

import numpy as np

from ..runtime import dot_grad_a, dot_grad_b, matmul_grad_a, matmul_grad_b
from ..runtime_linalg import matmul_forward_form, sparse_operand_check
from .table import defvjp


def _matmul_forward(x1, x2):
    """known shapes: N-D @ 2-D as one 2-D GEMM where faster and, on this BLAS, bitwise

    (`matmul_forward_form`, probed once per shape and process). x1 and x2 are Infos (or
    None); the answer is an expression over them, or None for ``x1 @ x2``:
    ``(x1.reshape(512, 128) @ x2).reshape((8, 64, 512))``."""
    if x1 is None or x2 is None:
        return None
    return matmul_forward_form(x1.shape, x2.shape, x1.dtype, x2.dtype, x1.c_order,
                               x2.c_order, names=("x1", "x2"))


defvjp(np.matmul,
       lambda g, out, x1, x2: matmul_grad_a(g, x1, x2),
       lambda g, out, x1, x2: matmul_grad_b(g, x1, x2),
       name="matmul", linear=('x1', 'x2'), spelling="x1 @ x2", family="linalg",
       forward_form=_matmul_forward, check=sparse_operand_check,
       derivation="dA = G B^T, dB = A^T G (1-D operands promoted; where one operand has no "
       "batch, one 2-D GEMM on reshaped operands contracts the other's batch too; broadcast "
       "batch axes unbroadcast)",
       test_cases=(("a @ b", [(4,), (4,)]), ("a @ b", [(3, 4), (4,)]),
                   ("a @ b", [(4,), (4, 5)]), ("a @ b", [(3, 4), (4, 5)]),
                   ("a @ b", [(2, 3, 4), (2, 4, 5)]), ("a @ b", [(2, 3, 4), (4, 5)]),
                   ("a @ b", [(3, 4), (2, 4, 5)]), ("a @ b", [(1, 3, 4), (2, 4, 5)]),
                   ("a @ b", [(2, 1, 3, 4), (5, 4, 2)]), ("a @ b", [(4,), (2, 4, 5)]),
                   ("a @ b", [(2, 3, 4), (4,)]), ("np.matmul(a, b)", [(3, 4), (4, 5)]),
                   ("a @ a", [(3, 3)]), ("a @ b.T", [(3, 4), (5, 4)]),
                   ("a @ b", [(2, 2, 3, 4), (4, 5)]), ("a @ b", [(2, 3, 4), (1, 4, 5)]),
                   ("a @ b", [(3, 4), (1, 1, 4, 5)]), ("a @ b", [(1, 1, 3, 4), (2, 4, 5)]),
                   ("a @ b", [(3, 4), (2, 3, 4, 5)]), ("a @ b", [(4,), (1, 4, 5)]),
                   ("np.transpose(a, (1, 0, 2)) @ b", [(3, 2, 4), (4, 5)])))
defvjp(np.dot,
       lambda g, out, a, b: dot_grad_a(g, a, b),
       lambda g, out, a, b: dot_grad_b(g, a, b),
       name="dot", linear=('a', 'b'), family="linalg",
       derivation="as matmul for 1-D and 2-D operands; for N-D b, dA = tensordot(G, B) over "
       "b's other axes and dB = tensordot(A, G) over a's leading axes",
       test_cases=(("np.dot(a, b)", [(4,), (4,)]), ("np.dot(a, b)", [(3, 4), (4,)]),
                   ("np.dot(a, b)", [(4,), (4, 5)]), ("np.dot(a, b)", [(3, 4), (4, 5)]),
                   ("np.dot(a, b)", [(2, 3, 4), (4, 5)]), ("np.dot(a, b)", [(2, 3, 4), (4,)]),
                   ("np.dot(a, b)", [(3, 4), (2, 4, 5)]), ("np.dot(a, b)", [(4,), (2, 4, 5)]),
                   ("np.dot(a, b)", [(2, 3, 4), (5, 4, 2)]), ("np.dot(a, b)", [(), (3, 4)]),
                   ("np.dot(a, b)", [(3,), ()]), ("a.dot(b)", [(3, 4), (4, 5)])))
defvjp(np.outer,
       lambda g, out, a, b: np.reshape(g @ np.ravel(b), np.shape(a)),
       lambda g, out, a, b: np.reshape(np.ravel(a) @ g, np.shape(b)),
       name="outer", linear=('a', 'b'), family="linalg",
       derivation="out_ij = a_i b_j (both flattened): da = G b, db = a G",
       test_cases=(("np.outer(a, b)", [(3,), (4,)]), ("np.outer(a, b)", [(2, 3), (4,)]),
                   ("np.outer(a, b)", [(), (4,)])))
