"""ctypes declarations of DLPack 1.x and the nd functions the DLPack round
trip scripts use (tests/dlpack_numpy.py, scripts/gpu/dlpack_peers.py)."""
import ctypes as C

ND_OK = 0
ND_FLOAT32, ND_FLOAT64 = 11, 12
READ, READ_WRITE = 1, 3


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)),
                ("byte_offset", C.c_uint64)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p),
                ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


class nd_memory(C.Structure):
    _fields_ = [("kind", C.c_int), ("device", C.c_int)]


HOST = nd_memory(0, 0)


def cuda(k=0):
    return nd_memory(1, k)


def load_nd(path):
    nd = C.CDLL(path)
    p = C.c_void_p
    sigs = {
        "nd_arange": (p, [C.c_int, C.c_double, C.c_double, C.c_double]),
        "nd_reshape": (p, [p, C.c_int, C.POINTER(C.c_int64)]),
        "nd_transpose": (p, [p, p]),
        "nd_to_dlpack": (p, [p, nd_memory, C.c_int]),
        "nd_from_dlpack": (p, [p]),
        "nd_fill": (C.c_int, [p, C.c_double]),
        "nd_assign": (C.c_int, [p, p]),
        "nd_mul": (p, [p, p]),
        "nd_scalar": (p, [C.c_double]),
        "nd_sum": (p, [p, C.c_int]),
        "nd_item": (C.c_double, [p]),
        "nd_sync": (C.c_int, []),
        "nd_free": (None, [p]),
        "nd_last_error": (C.c_char_p, []),
        "nd_clear_error": (None, []),
        "nd_shutdown": (None, []),
        "nd_backend_name": (C.c_char_p, []),
    }
    for name, (res, args) in sigs.items():
        f = getattr(nd, name)
        f.restype = res
        f.argtypes = args
    return nd
