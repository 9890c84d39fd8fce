"""NumPy's side of bench/linalg_bench.c: the same cases (cholesky, solve with
one right-hand side, eigh, reduced svd of an N x N SPD matrix P P^T / N + I
in float32 and float64; B batched 8x8 float32 solves), fresh inputs per run,
the median of 7 runs. Usage: python3 bench/peers/linalg_numpy.py N B"""
import numpy as np, time, sys
N=int(sys.argv[1]); B=int(sys.argv[2]); R=7
rng=np.random.default_rng(0)
def spd(t, shape_b, n):
    p=rng.uniform(-1,1,shape_b+(n,n)).astype(t); return (p@np.swapaxes(p,-1,-2))/n+np.eye(n,dtype=t)
def med(f, t, b, n):
    ts=[]
    for _ in range(R):
        a=spd(t,b,n); rhs=rng.uniform(-1,1,b+(n,1)).astype(t)
        t0=time.perf_counter(); f(a,rhs); ts.append(time.perf_counter()-t0)
    return 1e3*sorted(ts)[R//2]
ops={'cholesky':lambda a,b:np.linalg.cholesky(a),'solve':lambda a,b:np.linalg.solve(a,b),'eigh':lambda a,b:np.linalg.eigh(a),'svd':lambda a,b:np.linalg.svd(a,full_matrices=False)}
for k,f in ops.items():
    for t in (np.float32,np.float64): print(f"{k:9s} {np.dtype(t).name:7s} 1 x {N}  {med(f,t,(),N):10.3f} ms")
print(f"batched   float32 {B} x 8  {med(ops['solve'],np.float32,(B,),8):10.3f} ms")
