"""Linear algebra: matmul (`@`), dot and outer, for 1-D, 2-D and batched operands.

Why the backward of a matmul is two matmuls: C = A B, C_ij = sum_k A_ik B_kj, so
dL/dA_ik = sum_j G_ij B_kj = (G B^T)_ik and dL/dB_kj = sum_i A_ik G_ij = (A^T G)_kj.
The runtime helpers handle 1-D promotion and batch broadcasting; for 2-D operands
they simplify, once shapes are known, to the two matmuls themselves. `np.dot` is matmul
for 1-D and 2-D operands, but contracts a's last axis with b's second-to-last for N-D b
(no batch broadcasting) and multiplies when either operand is 0-d.
"""

import numpy as np

from ..runtime import dot_grad_a, dot_grad_b, matmul_grad_a, matmul_grad_b
from .table import defvjp

defvjp(np.matmul,
       lambda g, out, x1, x2: matmul_grad_a(g, x1, x2),
       lambda g, out, x1, x2: matmul_grad_b(g, x1, x2),
       name="matmul", linear=('x1', 'x2'), spelling="x1 @ x2", family="linalg",
       derivation="dA = G B^T, dB = A^T G (1-D operands promoted, batch axes unbroadcast)",
       test_cases=(("a @ b", [(4,), (4,)]), ("a @ b", [(3, 4), (4,)]),
                   ("a @ b", [(4,), (4, 5)]), ("a @ b", [(3, 4), (4, 5)]),
                   ("a @ b", [(2, 3, 4), (2, 4, 5)]), ("a @ b", [(2, 3, 4), (4, 5)]),
                   ("a @ b", [(3, 4), (2, 4, 5)]), ("a @ b", [(1, 3, 4), (2, 4, 5)]),
                   ("a @ b", [(2, 1, 3, 4), (5, 4, 2)]), ("a @ b", [(4,), (2, 4, 5)]),
                   ("a @ b", [(2, 3, 4), (4,)]), ("np.matmul(a, b)", [(3, 4), (4, 5)]),
                   ("a @ a", [(3, 3)]), ("a @ b.T", [(3, 4), (5, 4)])))
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
