"""Linear algebra: matmul (`@`) and dot, for 1-D, 2-D and batched operands.

Why the backward of a matmul is two matmuls: C = A B, C_ij = sum_k A_ik B_kj, so
dL/dA_ik = sum_j G_ij B_kj = (G B^T)_ik and dL/dB_kj = sum_i A_ik G_ij = (A^T G)_kj.
The runtime helpers handle 1-D promotion and batch broadcasting; for 2-D operands
they simplify, once shapes are known, to the two matmuls themselves.
"""

import numpy as np

from ..runtime import matmul_grad_a, matmul_grad_b
from .table import defvjp

defvjp(np.matmul,
       lambda g, out, x1, x2: matmul_grad_a(g, x1, x2),
       lambda g, out, x1, x2: matmul_grad_b(g, x1, x2),
       name="matmul", spelling="x1 @ x2", family="linalg",
       derivation="dA = G B^T, dB = A^T G (batch axes unbroadcast)")
defvjp(np.dot,
       lambda g, out, a, b: matmul_grad_a(g, a, b),
       lambda g, out, a, b: matmul_grad_b(g, a, b),
       name="dot", family="linalg",
       derivation="as matmul, for 1-D and 2-D operands")
