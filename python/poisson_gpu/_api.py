"""The C API through ctypes: the library, its structs and its functions.

No compiled extension: the shared library libpoisson_gpu.so (installed into
this package by ``pip install .``) is loaded with ctypes on first use.
"""
import ctypes
import ctypes.util
import glob
import os

# ---- constants, as poisson_gpu.h defines them ------------------------------

SUCCESS = 0
STATUS_NAMES = {
    0: "PGPU_SUCCESS",
    1: "PGPU_ERROR_INVALID_ARGUMENT",
    2: "PGPU_ERROR_UNSUPPORTED",
    3: "PGPU_ERROR_OUT_OF_MEMORY",
    4: "PGPU_ERROR_CUDA",
    5: "PGPU_ERROR_NO_DEVICE",
    6: "PGPU_ERROR_NOT_CONVERGED",
    7: "PGPU_ERROR_BREAKDOWN",
    8: "PGPU_ERROR_NONFINITE_INPUT",
}

METHODS = {"jacobi": 0x01, "rbgs": 0x02, "vcycle": 0x04, "fmg": 0x08, "fft": 0x10, "cg": 0x20, "bicgstab": 0x40}
PRECISIONS = {"double": 0x100, "float": 0x200, "mixed": 0x400}
WCYCLE = 0x1000
FIXED = 0x2000
PIPELINED = 0x4000
PRECONDITIONERS = {"default": 0, "none": 1, "jacobi": 2, "vcycle": 3, "fft": 4}
BCS = {"dirichlet": 0, "neumann": 1, "periodic": 2}
FACES = ("x-", "x+", "y-", "y+", "z-", "z+")
CELL_FLUID, CELL_DIRICHLET, CELL_SOLID = 0, 1, 2


class Config(ctypes.Structure):
    """struct pgpu_config."""

    _fields_ = [
        ("nx", ctypes.c_int64),
        ("ny", ctypes.c_int64),
        ("nz", ctypes.c_int64),
        ("hx", ctypes.c_double),
        ("hy", ctypes.c_double),
        ("hz", ctypes.c_double),
        ("stride_y", ctypes.c_int64),
        ("stride_z", ctypes.c_int64),
        ("flags", ctypes.c_uint),
        ("bc", ctypes.c_int * 6),
        ("tolerance", ctypes.c_double),
        ("max_iterations", ctypes.c_int),
        ("omega", ctypes.c_double),
        ("pre_smooth", ctypes.c_int),
        ("post_smooth", ctypes.c_int),
        ("check_interval", ctypes.c_int),
        ("stream", ctypes.c_void_p),
        ("preconditioner", ctypes.c_int),
    ]


class CReport(ctypes.Structure):
    """struct pgpu_report."""

    _fields_ = [
        ("iterations", ctypes.c_int),
        ("residual_norm", ctypes.c_double),
        ("residual_max", ctypes.c_double),
        ("relative_residual", ctypes.c_double),
        ("rhs_norm", ctypes.c_double),
        ("seconds", ctypes.c_double),
        ("status", ctypes.c_int),
        ("singular", ctypes.c_int),
        ("rhs_mean", ctypes.c_double),
        ("refinements", ctypes.c_int),
        ("projected", ctypes.c_int),
    ]


MONITOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_double)

_lib = None


def _candidates():
    """Where the library may be, in the order tried."""
    env = os.environ.get("POISSON_GPU_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    for pattern in ("libpoisson_gpu.so", "libpoisson_gpu.so.*", "libpoisson_gpu*.dylib", "poisson_gpu*.dll"):
        yield from sorted(glob.glob(os.path.join(here, pattern)))
    found = ctypes.util.find_library("poisson_gpu")
    if found:
        yield found


def _preload_cuda():
    """Loads the CUDA runtime and cuFFT from the toolkit's usual places, for a
    library whose run path does not reach them."""
    dirs = [os.path.join(os.environ[v], sub)
            for v in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(v) for sub in ("lib64", "lib")]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/lib"]
    for name in ("libcudart.so*", "libcufft.so*"):
        for d in dirs:
            hits = sorted(glob.glob(os.path.join(d, name)))
            if hits:
                try:
                    ctypes.CDLL(hits[-1], mode=ctypes.RTLD_GLOBAL)
                    break
                except OSError:
                    pass


def lib():
    """The loaded library (loads it on first use); OSError when none loads."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for path in _candidates():
        for attempt in (0, 1):
            try:
                handle = ctypes.CDLL(path)
                break
            except OSError as e:
                if attempt == 0:
                    _preload_cuda()
                else:
                    errors.append("%s: %s" % (path, e))
                    handle = None
        if handle is not None:
            _lib = _declare(handle)
            return _lib
    raise OSError(
        "poisson_gpu: the shared library libpoisson_gpu.so could not be loaded (%s). Install the package "
        "with 'pip install .' from the repository, or set POISSON_GPU_LIBRARY to the library's path."
        % ("; ".join(errors) if errors else "not found"))


def _declare(h):
    c = ctypes
    P = c.c_void_p
    h.pgpu_version.restype = c.c_int
    h.pgpu_version.argtypes = []
    h.pgpu_config_default.restype = Config
    h.pgpu_config_default.argtypes = [c.c_int64, c.c_int64, c.c_int64]
    h.pgpu_config_set_domain.restype = c.c_int
    h.pgpu_config_set_domain.argtypes = [c.POINTER(Config), c.c_double, c.c_double, c.c_double]
    h.pgpu_create.restype = c.c_int
    h.pgpu_create.argtypes = [c.POINTER(Config), c.POINTER(P)]
    h.pgpu_workspace_size.restype = c.c_int
    h.pgpu_workspace_size.argtypes = [c.POINTER(Config), c.POINTER(c.c_size_t)]
    h.pgpu_workspace_bytes.restype = c.c_size_t
    h.pgpu_workspace_bytes.argtypes = [P]
    for name in ("pgpu_solve", "pgpu_solve_host"):
        f = getattr(h, name)
        f.restype = c.c_int
        f.argtypes = [P, P, P, c.POINTER(CReport)]
    h.pgpu_residual.restype = c.c_int
    h.pgpu_residual.argtypes = [P, P, P, c.POINTER(c.c_double)]
    h.pgpu_get_config.restype = c.c_int
    h.pgpu_get_config.argtypes = [P, c.POINTER(Config)]
    h.pgpu_set_stream.restype = c.c_int
    h.pgpu_set_stream.argtypes = [P, P]
    h.pgpu_get_stream.restype = c.c_int
    h.pgpu_get_stream.argtypes = [P, c.POINTER(P)]
    h.pgpu_set_monitor.restype = c.c_int
    h.pgpu_set_monitor.argtypes = [P, MONITOR, P]
    h.pgpu_set_mask.restype = c.c_int
    h.pgpu_set_mask.argtypes = [P, P]
    h.pgpu_set_coefficients.restype = c.c_int
    h.pgpu_set_coefficients.argtypes = [P, P]
    h.pgpu_destroy.restype = None
    h.pgpu_destroy.argtypes = [P]
    h.pgpu_status_string.restype = c.c_char_p
    h.pgpu_status_string.argtypes = [c.c_int]
    h.pgpu_last_error.restype = c.c_char_p
    h.pgpu_last_error.argtypes = [P]
    return h
