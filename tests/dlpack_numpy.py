"""DLPack round trips between nd and NumPy, through ctypes (meson test
`dlpack_numpy`; exits 77, a visible skip, when NumPy is missing).

nd -> NumPy: np.from_dlpack of nd_to_dlpack's tensor (a transposed view,
read-only and read-write); NumPy -> nd: nd_from_dlpack of an array's
__dlpack__ capsule (a strided view, written in place; a read-only one; a
complex64 one, exported back). Checks values, no copies (addresses), the read-only
flag and that each side's deleter runs once (nd's export ends; NumPy's
reference to its array goes).

usage: dlpack_numpy.py PATH/TO/libnd.so"""
import ctypes as C
import gc
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed")
    sys.exit(77)
if tuple(int(v) for v in np.__version__.split(".")[:2]) < (2, 1):
    # nd speaks DLPack 1.x (versioned capsules), which NumPy reads from 2.1 on.
    print(f"SKIP: NumPy {np.__version__} has no DLPack 1.x (versioned capsules need NumPy >= 2.1)")
    sys.exit(77)

from dlpack_ctypes import DLManagedTensorVersioned, load_nd, HOST, READ, READ_WRITE, ND_FLOAT64, ND_OK

nd = load_nd(sys.argv[1])
py = C.pythonapi
py.PyCapsule_New.restype = C.py_object
py.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
py.PyCapsule_GetPointer.restype = C.c_void_p
py.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
py.PyCapsule_SetName.restype = C.c_int
py.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def shape(*dims):
    return (C.c_int64 * len(dims))(*dims)


class Exported:
    """A producer object NumPy's from_dlpack accepts, around nd's tensor."""

    def __init__(self, tensor_ptr):
        self.ptr = tensor_ptr

    def __dlpack__(self, **kwargs):
        return py.PyCapsule_New(self.ptr, b"dltensor_versioned", None)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


# ---- nd -> NumPy, read-only, a transposed view (strides (1, 4))
x = nd.nd_arange(ND_FLOAT64, 0.0, 12.0, 1.0)
x2 = nd.nd_reshape(x, 2, shape(3, 4))
xt = nd.nd_transpose(x2, None)
t = nd.nd_to_dlpack(xt, HOST, READ)
check(bool(t), "nd_to_dlpack returned a tensor")
tv = C.cast(t, C.POINTER(DLManagedTensorVersioned)).contents
check(tv.version.major == 1 and tv.flags & 1 == 1, "version 1, read-only flag")
a = np.from_dlpack(Exported(t))
check(np.array_equal(a, np.arange(12.0).reshape(3, 4).T), "values of the transposed view")
check(not a.flags.writeable, "NumPy sees it read-only")
check(a.__array_interface__["data"][0] == tv.dl_tensor.data, "no copy (same address)")
check(nd.nd_fill(x2, 0.0) != ND_OK, "nd refuses writes while NumPy holds the export")
nd.nd_clear_error()
del a
gc.collect()
check(nd.nd_fill(x2, 5.0) == ND_OK, "the deleter ended the export: writes work again")
check(nd.nd_item(nd.nd_sum(x2, -1000)) == 60.0, "and ran")

# ---- nd -> NumPy, read-write: NumPy's writes are seen by nd's later ops
y = nd.nd_arange(ND_FLOAT64, 0.0, 6.0, 1.0)
t = nd.nd_to_dlpack(y, HOST, READ_WRITE)
b = np.from_dlpack(Exported(t))
check(b.flags.writeable, "read-write export is writable in NumPy")
b[:] = -b
del b
gc.collect()
check(nd.nd_item(nd.nd_sum(y, -1000)) == -15.0, "nd sees what NumPy wrote")

# ---- NumPy -> nd: a strided view, written in place by nd
base = np.arange(20, dtype=np.float64).reshape(4, 5)
view = base[:, ::2]  # strides (5, 2) elements
refs_before = sys.getrefcount(view)
cap = view.__dlpack__(max_version=(1, 0))
ptr = py.PyCapsule_GetPointer(cap, b"dltensor_versioned")
z = nd.nd_from_dlpack(ptr)
check(bool(z), "nd_from_dlpack of NumPy's tensor: " + (nd.nd_last_error() or b"").decode())
py.PyCapsule_SetName(cap, b"used_dltensor_versioned")  # consumed: nd calls the deleter
check(nd.nd_item(nd.nd_sum(z, -1000)) == float(view.sum()), "sum of the strided view")
two = nd.nd_scalar(2.0)
check(nd.nd_assign(z, nd.nd_mul(z, two)) == ND_OK, "nd_assign into NumPy's memory")
check(nd.nd_sync() == ND_OK, "nd_sync")
want = np.arange(20, dtype=np.float64).reshape(4, 5)
want[:, ::2] *= 2
check(np.array_equal(base, want), "NumPy's array was written in place, gaps untouched")
del cap
gc.collect()
check(sys.getrefcount(view) == refs_before + 1, "NumPy's tensor holds the view while nd uses it")
nd.nd_free(z)
gc.collect()
check(sys.getrefcount(view) == refs_before, "nd's release ran NumPy's deleter (reference dropped)")

# ---- a read-only NumPy array stays read-only in nd
ro = np.ones(4, dtype=np.float32)
ro.flags.writeable = False
cap = ro.__dlpack__(max_version=(1, 0))
r = nd.nd_from_dlpack(py.PyCapsule_GetPointer(cap, b"dltensor_versioned"))
py.PyCapsule_SetName(cap, b"used_dltensor_versioned")
check(nd.nd_fill(r, 3.0) != ND_OK and b"read-only DLPack" in nd.nd_last_error(), "read-only flag respected")
nd.nd_clear_error()
nd.nd_free(r)

# ---- complex64 both ways: interleaved parts, no copy
cx = np.array([1 + 2j, -3.5j, np.inf - 0.25j], dtype=np.complex64)
cap = cx.__dlpack__(max_version=(1, 0))
zc = nd.nd_from_dlpack(py.PyCapsule_GetPointer(cap, b"dltensor_versioned"))
check(bool(zc), "complex64 imported: " + (nd.nd_last_error() or b"").decode())
py.PyCapsule_SetName(cap, b"used_dltensor_versioned")
t = nd.nd_to_dlpack(zc, HOST, READ)
back = np.from_dlpack(Exported(t))
check(back.dtype == np.complex64 and np.array_equal(back, cx), "complex64 values round trip")
del back, cap
gc.collect()
nd.nd_free(zc)
gc.collect()

nd.nd_shutdown()
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
