"""DLPack round trips between nd's CUDA backend and the GPU peers present
(CuPy, PyTorch), zero-copy in device memory, through ctypes. A peer that is
not installed is skipped with a line saying so; exits 77 when none is, 1 on
any failure.

usage: ND_BACKEND=cuda GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 \
         python3 scripts/gpu/dlpack_peers.py build/libnd.so

For each peer P:
  nd -> P: P's from_dlpack of nd_to_dlpack(x, CUDA(0), READ) (a transposed
      view): values, the same device address, read-only where P tracks it;
      then read-write: P's in-place write is seen by nd's next op.
  P -> nd: nd_from_dlpack of P's __dlpack__(max_version=(1, 0)) capsule of
      a strided device view: nd_sum equals P's, nd_assign writes P's memory
      in place (P sees it after nd_sync), nd_free runs P's deleter."""
import ctypes as C
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
from dlpack_ctypes import DLManagedTensorVersioned, load_nd, cuda, READ, READ_WRITE, ND_FLOAT32, ND_OK  # noqa: E402

nd = load_nd(sys.argv[1])
py = C.pythonapi
py.PyCapsule_New.restype = C.py_object
py.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
py.PyCapsule_GetPointer.restype = C.c_void_p
py.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
py.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


class Exported:
    def __init__(self, ptr):
        self.ptr = ptr

    def __dlpack__(self, stream=None, **kwargs):
        # nd_to_dlpack ran what the tensor needs and waited (nd_data): any
        # stream may read it at once.
        return py.PyCapsule_New(self.ptr, b"dltensor_versioned", None)

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0


def shape(*dims):
    return (C.c_int64 * len(dims))(*dims)


def nd_to_peer(name, from_dlpack, to_list, data_ptr, negate):
    x = nd.nd_arange(ND_FLOAT32, 0.0, 12.0, 1.0)
    xt = nd.nd_transpose(nd.nd_reshape(x, 2, shape(3, 4)), None)
    t = nd.nd_to_dlpack(xt, cuda(0), READ)
    check(bool(t), name + ": nd_to_dlpack in device memory: " + (nd.nd_last_error() or b"").decode())
    tv = C.cast(t, C.POINTER(DLManagedTensorVersioned)).contents
    a = from_dlpack(Exported(t))
    want = [[float(r + 4 * c) for c in range(3)] for r in range(4)]
    check(to_list(a) == want, name + ": values of nd's transposed view")
    check(data_ptr(a) == tv.dl_tensor.data, name + ": same device address (no copy)")
    del a
    y = nd.nd_arange(ND_FLOAT32, 0.0, 6.0, 1.0)
    t = nd.nd_to_dlpack(y, cuda(0), READ_WRITE)
    b = from_dlpack(Exported(t))
    negate(b)
    del b
    check(nd.nd_item(nd.nd_sum(y, -1000)) == -15.0, name + ": nd sees the peer's in-place write")


def peer_to_nd(name, make, sum_of, to_list, synchronize):
    base = make()  # 4x5 float32 on the device
    view = base[:, ::2]
    # nd runs on its own stream: the producer's work must be finished
    # (README: nd_from_dlpack of device memory).
    synchronize()
    cap = view.__dlpack__(max_version=(1, 0))
    z = nd.nd_from_dlpack(py.PyCapsule_GetPointer(cap, b"dltensor_versioned"))
    check(bool(z), name + ": nd_from_dlpack of the peer's tensor: " + (nd.nd_last_error() or b"").decode())
    py.PyCapsule_SetName(cap, b"used_dltensor_versioned")
    check(nd.nd_item(nd.nd_sum(z, -1000)) == sum_of(view), name + ": nd_sum of the peer's strided view")
    check(nd.nd_assign(z, nd.nd_mul(z, nd.nd_scalar(2.0))) == ND_OK, name + ": nd_assign into the peer's memory")
    check(nd.nd_sync() == ND_OK, name + ": nd_sync")
    synchronize()
    got = to_list(base)
    want = [[float(5 * r + c) * (2 if c % 2 == 0 else 1) for c in range(5)] for r in range(4)]
    check(got == want, name + ": the peer's array was written in place")
    nd.nd_free(z)


peers = 0
try:
    import cupy as cp
except ImportError:
    print("skip cupy: not installed")
else:
    peers += 1
    nd_to_peer("cupy", cp.from_dlpack, lambda a: cp.asnumpy(a).tolist(), lambda a: a.data.ptr,
               lambda b: cp.negative(b, out=b))
    peer_to_nd("cupy", lambda: cp.arange(20, dtype=cp.float32).reshape(4, 5), lambda v: float(v.sum()),
               lambda a: cp.asnumpy(a).tolist(), lambda: cp.cuda.runtime.deviceSynchronize())
try:
    import torch
except ImportError:
    print("skip torch: not installed")
else:
    if not torch.cuda.is_available():
        print("skip torch: no CUDA in this build of torch")
    else:
        peers += 1
        nd_to_peer("torch", torch.from_dlpack, lambda a: a.cpu().tolist(), lambda a: a.data_ptr(),
                   lambda b: b.neg_())
        peer_to_nd("torch", lambda: torch.arange(20, dtype=torch.float32, device="cuda").reshape(4, 5),
                   lambda v: float(v.sum()), lambda a: a.cpu().tolist(), torch.cuda.synchronize)

nd.nd_shutdown()
if peers == 0:
    print("SKIP: neither cupy nor torch is installed")
    sys.exit(77)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
