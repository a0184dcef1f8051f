"""What an array is, as the solver needs to know it: where its data is (host
or device), its element type, shape and strides in elements.

Device arrays: anything with ``__cuda_array_interface__`` (CuPy, PyTorch,
Numba, ...) or ``__dlpack__`` on a CUDA device (JAX, TensorFlow, PyTorch
again).  Host arrays: anything with ``__array_interface__`` (NumPy) or a
CPU ``__dlpack__``.  No array library is imported here.
"""
import ctypes

_TYPES = {"<f4": ("float32", 4), "<f8": ("float64", 8), "|u1": ("uint8", 1), "<u1": ("uint8", 1)}


class ArrayDesc:
    """ptr, device (True: CUDA memory), dtype name, itemsize, shape, strides
    (in elements), readonly; `keep` holds what must stay alive meanwhile."""

    def __init__(self, ptr, device, dtype, itemsize, shape, strides, readonly, keep=None):
        self.ptr = ptr
        self.device = device
        self.dtype = dtype
        self.itemsize = itemsize
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.readonly = readonly
        self.keep = keep

    def __repr__(self):
        return "ArrayDesc(%s, %s, shape=%s, strides=%s)" % (
            "device" if self.device else "host", self.dtype, self.shape, self.strides)


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= int(n)
    return tuple(reversed(strides))


def _from_interface(d, device, what):
    typestr = d["typestr"]
    if typestr not in _TYPES:
        raise TypeError("%s: element type %r: the solver takes float32 or float64 arrays (uint8 for a mask)"
                        % (what, typestr))
    dtype, size = _TYPES[typestr]
    shape = tuple(d["shape"])
    if d.get("mask") is not None:
        raise TypeError("%s: masked arrays are not supported" % what)
    strides = d.get("strides")
    if strides is None:
        el = _contiguous_strides(shape)
    else:
        if any(s % size for s in strides):
            raise ValueError("%s: strides %s are not multiples of the element size" % (what, tuple(strides)))
        el = tuple(s // size for s in strides)
    ptr, readonly = d["data"]
    return ArrayDesc(ptr or 0, device, dtype, size, shape, el, bool(readonly))


# ---- DLPack ------------------------------------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_KDL_FLOAT, _KDL_UINT = 2, 1


def _capsule_pointer(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, b"dltensor")


def _from_dlpack(obj, what, stream):
    # A CUDA producer is told the consumer's stream (it orders its pending
    # work before it); a host producer takes none.
    on_cuda = True
    if hasattr(obj, "__dlpack_device__"):
        on_cuda = obj.__dlpack_device__()[0] in (_KDL_CUDA, _KDL_CUDA_MANAGED)
    try:
        capsule = obj.__dlpack__(stream=stream) if (on_cuda and stream is not None) else obj.__dlpack__()
    except TypeError:
        capsule = obj.__dlpack__()
    # The capsule is not consumed: its destructor frees the tensor when
    # `keep` (the capsule) is released after the call.
    t = ctypes.cast(_capsule_pointer(capsule), ctypes.POINTER(_DLTensor)).contents
    kind = t.device.device_type
    if kind not in (_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED):
        raise TypeError("%s: DLPack device type %d: the solver takes CUDA or host memory" % (what, kind))
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    if lanes != 1 or not ((code == _KDL_FLOAT and bits in (32, 64)) or (code == _KDL_UINT and bits == 8)):
        raise TypeError("%s: DLPack type (code %d, %d bits, %d lanes): the solver takes float32 or float64"
                        % (what, code, bits, lanes))
    size = bits // 8
    dtype = {(_KDL_FLOAT, 32): "float32", (_KDL_FLOAT, 64): "float64", (_KDL_UINT, 8): "uint8"}[(code, bits)]
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else _contiguous_strides(shape)
    ptr = (t.data or 0) + t.byte_offset
    device = kind in (_KDL_CUDA, _KDL_CUDA_MANAGED)
    return ArrayDesc(ptr, device, dtype, size, shape, strides, False, keep=capsule)


def describe(obj, what="array", stream=None):
    """The ArrayDesc of obj; TypeError when it is no array the solver takes.
    `stream` is given to __dlpack__ (the consumer's stream, DLPack's rule)."""
    if hasattr(obj, "__cuda_array_interface__"):
        try:
            d = obj.__cuda_array_interface__
        except (AttributeError, RuntimeError, TypeError) as e:
            if not hasattr(obj, "__dlpack__"):
                raise TypeError("%s: %s" % (what, e)) from e
        else:
            desc = _from_interface(d, True, what)
            desc.keep = obj
            return desc
    if hasattr(obj, "__array_interface__"):
        desc = _from_interface(obj.__array_interface__, False, what)
        desc.keep = obj
        return desc
    if hasattr(obj, "__dlpack__"):
        try:
            return _from_dlpack(obj, what, stream)
        except (RuntimeError, BufferError) as e:  # e.g. a PyTorch tensor that requires grad
            hint = " (a tensor that requires grad: pass .detach())" if "grad" in str(e) else ""
            raise TypeError("%s: %s%s" % (what, e, hint)) from e
    raise TypeError("%s: %s is not an array the solver takes (it needs __cuda_array_interface__, "
                    "__dlpack__ or __array_interface__: CuPy, PyTorch, NumPy, ...)" % (what, type(obj).__name__))


def layout(desc, what="array"):
    """(nx, ny, nz, stride_y, stride_z) of an array laid out as the solver's
    u: C order, shape (nz+2, ny+2, nx+2) in 3D or (ny+2, nx+2) in 2D (one
    ghost layer per side), x contiguous."""
    if len(desc.shape) not in (2, 3):
        raise ValueError("%s: shape %s: the solver takes (ny+2, nx+2) or (nz+2, ny+2, nx+2) arrays, one ghost "
                         "layer per side" % (what, desc.shape))
    if any(n < 3 for n in desc.shape):
        raise ValueError("%s: shape %s: every axis needs one interior point and two ghosts (>= 3)"
                         % (what, desc.shape))
    if desc.strides[-1] != 1:
        raise ValueError("%s: strides %s (elements): the last (x) axis must be contiguous" % (what, desc.strides))
    if len(desc.shape) == 2:
        ny2, nx2 = desc.shape
        sy = desc.strides[0]
        return nx2 - 2, ny2 - 2, 1, sy, sy * ny2
    nz2, ny2, nx2 = desc.shape
    if nz2 == 3:  # nz = 1 is the 2D problem, whose arrays have no z ghosts
        raise ValueError("%s: shape %s: a 3D array needs two interior planes or more; a 2D problem's arrays are "
                         "(ny+2, nx+2)" % (what, desc.shape))
    return nx2 - 2, ny2 - 2, nz2 - 2, desc.strides[1], desc.strides[0]
