"""E11's MPI side (bench/scaleout.py runs it): the same per-step data movement as
srcad.parallel's Dask step -- rank 0 broadcasts the parameters, every rank makes a gradient
of the parameters' size (no compute: zeros), rank 0 gathers them in rank order and sums them
in that order -- timed per step; `kill` mode: rank 1 kills itself in the middle of step 5.

    mpiexec -n 2 python bench/scaleout_mpi.py N_FLOATS STEPS overhead|kill
"""

import json
import os
import signal
import sys
import time

import numpy as np
from mpi4py import MPI

if __name__ == "__main__":
    n, steps, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    params = np.zeros(n, np.float32)
    gathered = np.empty((size, n), np.float32) if rank == 0 else None
    comm.Barrier()
    if rank == 0:
        print(json.dumps({"ready": time.time()}), flush=True)
    times = []
    for step in range(steps):
        t0 = time.perf_counter()
        comm.Bcast(params, root=0)
        grad = np.zeros_like(params)
        if mode == "kill" and step == 5 and rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        comm.Gather(grad, gathered, root=0)
        if rank == 0:
            total = gathered[0].copy()
            for k in range(1, size):
                total += gathered[k]
        times.append(time.perf_counter() - t0)
    if rank == 0:
        print(json.dumps({"step_s": times}), flush=True)
