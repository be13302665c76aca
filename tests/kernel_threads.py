"""`on_threads(n)`: srcad's runtime -- its kernels, gemm, and the plain helpers (lead_sum,
c_copy, extremum_grad_rows) -- on n threads at every size and every call, whatever the load
(size threshold 0, the per-call choice off), restored after: how tests hold a threaded path
to the one-thread bits on small arrays."""

import contextlib

from srcad import build


@contextlib.contextmanager
def on_threads(n: int):
    rt = build.runtime()
    old = rt.set_num_threads(n), rt.set_parallel_threshold(0), rt.set_adaptive(False)
    try:
        yield
    finally:
        rt.set_num_threads(old[0])
        rt.set_parallel_threshold(old[1])
        rt.set_adaptive(old[2])
