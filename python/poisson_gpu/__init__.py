"""poisson_gpu: a GPU solver for the Poisson equation -Laplace(u) = f on
structured 2D and 3D grids, from Python.

    import cupy as cp                      # or torch, or numpy (host arrays)
    import poisson_gpu as pg

    u = cp.zeros((nz + 2, ny + 2, nx + 2))  # one ghost layer per side: the boundary values
    f = cp.zeros_like(u)                    # f's interior is the right-hand side
    ...
    report = pg.solve(u, f, method="fmg")   # u's interior now holds the solution
    print(report.iterations, report.relative_residual)

    # many solves of one size: keep a Solver (all device memory is allocated once)
    with pg.Solver((nx, ny, nz), method="vcycle", precision="float",
                   bc={"z": "periodic"}) as s:
        s.solve(u32, f32)

Arrays are C-ordered, indexed [k, j, i] (x fastest): shape (nz+2, ny+2, nx+2)
with nz >= 2, or (ny+2, nx+2) in 2D; padded rows and planes are fine (the
strides are read from the array).  Device arrays: anything with
__cuda_array_interface__ or __dlpack__ (CuPy, PyTorch, Numba; JAX arrays
are immutable: f only), on the current device; host arrays (NumPy) are
copied to the device and back (pgpu_solve_host).  float32 arrays solve in
float, float64 in double (or precision="mixed").

Streams: the solver's work goes to its stream (stream=, else the legacy
default stream), as in C.  It does not read a CUDA array interface's
stream: work that fills f on another stream (a non-blocking CuPy or
PyTorch stream) must be finished or ordered before the solve (pass that
stream as stream=); with fixed=True the solve returns before it is done.

Everything the C API says holds here: the header poisson_gpu.h is the
manual (methods, defaults, boundaries, precision, memory, streams).
Keyword arguments are the fields of pgpu_config: method (jacobi, rbgs,
vcycle, fmg, fft, cg, bicgstab), precision, preconditioner (cg and
bicgstab: vcycle, fft, jacobi, none), pipelined, h, bc, tolerance,
max_iterations, omega, pre_smooth, post_smooth, check_interval, wcycle,
fixed, stream, strides.  A numeric field left out (or 0) takes the
method's default, as in C; method, precision, preconditioner and bc are
names.  A failing call raises PoissonGPUError (a subclass per status) with
the status and the library's detail.  A Solver may be used from several
threads (its calls take turns).

The package is plain Python: it loads the shared library libpoisson_gpu.so
with ctypes (installed with it by ``pip install .``, or named by the
environment variable POISSON_GPU_LIBRARY).
"""
import ctypes as _ct
import numbers as _numbers
import threading as _threading

from . import _api
from ._arrays import describe as _describe, layout as _layout

__all__ = ["Solver", "solve", "workspace_size", "Report", "PoissonGPUError", "InvalidArgumentError",
           "UnsupportedError", "OutOfMemoryError", "CudaError", "NoDeviceError", "NotConvergedError",
           "BreakdownError", "NonfiniteInputError", "library_version", "CELL_FLUID", "CELL_DIRICHLET",
           "CELL_SOLID"]

__version__ = "0.7.0"

CELL_FLUID, CELL_DIRICHLET, CELL_SOLID = _api.CELL_FLUID, _api.CELL_DIRICHLET, _api.CELL_SOLID


# ---- errors ---------------------------------------------------------------------

class PoissonGPUError(RuntimeError):
    """A status other than PGPU_SUCCESS: .status (the number), .status_name
    ("PGPU_ERROR_..."), .detail (pgpu_last_error: which argument, which CUDA
    call), .report (the Report of a solve that ran: NOT_CONVERGED and
    BREAKDOWN leave u as reached), else None."""

    def __init__(self, status, detail="", report=None, what=""):
        self.status = int(status)
        self.status_name = _api.STATUS_NAMES.get(self.status, "status %d" % self.status)
        self.detail = detail
        self.report = report
        text = _status_text(self.status)
        msg = "%s%s (%s)" % (what + ": " if what else "", text, self.status_name)
        if detail:
            msg += ": " + detail
        super().__init__(msg)


class InvalidArgumentError(PoissonGPUError, ValueError):
    pass


class UnsupportedError(PoissonGPUError):
    pass


class OutOfMemoryError(PoissonGPUError, MemoryError):
    pass


class CudaError(PoissonGPUError):
    pass


class NoDeviceError(PoissonGPUError):
    pass


class NotConvergedError(PoissonGPUError):
    pass


class BreakdownError(PoissonGPUError):
    pass


class NonfiniteInputError(PoissonGPUError, ValueError):
    pass


_ERRORS = {1: InvalidArgumentError, 2: UnsupportedError, 3: OutOfMemoryError, 4: CudaError, 5: NoDeviceError,
           6: NotConvergedError, 7: BreakdownError, 8: NonfiniteInputError}


def _status_text(status):
    s = _api.lib().pgpu_status_string(status)
    return s.decode() if s else "unknown status"


def _raise(status, handle=None, report=None, what=""):
    detail = _api.lib().pgpu_last_error(handle)
    detail = detail.decode(errors="replace") if detail else ""
    raise _ERRORS.get(status, PoissonGPUError)(status, detail, report, what)


def library_version():
    """The compiled library's version as (major, minor, patch)."""
    v = _api.lib().pgpu_version()
    return (v // 10000, v // 100 % 100, v % 100)


# ---- the report -------------------------------------------------------------------

class Report:
    """What a solve reached (pgpu_report): iterations, residual_norm,
    residual_max, relative_residual, rhs_norm, seconds, status (a name),
    singular, rhs_mean, refinements, projected."""

    __slots__ = ("iterations", "residual_norm", "residual_max", "relative_residual", "rhs_norm", "seconds",
                 "status", "singular", "rhs_mean", "refinements", "projected")

    def __init__(self, c):
        for name in self.__slots__:
            setattr(self, name, getattr(c, name))
        self.status = _api.STATUS_NAMES.get(c.status, str(c.status))
        self.singular = bool(c.singular)

    def __repr__(self):
        return "Report(%s)" % ", ".join("%s=%r" % (n, getattr(self, n)) for n in self.__slots__)


# ---- configs from keyword arguments ------------------------------------------------

_KEYS = ("method", "precision", "preconditioner", "pipelined", "h", "length", "bc", "tolerance", "max_iterations",
         "omega", "pre_smooth", "post_smooth", "check_interval", "wcycle", "fixed", "stream", "strides")


def _stream_handle(stream):
    """A cudaStream_t from None/0, an int, or a stream object of CuPy (.ptr)
    or PyTorch (.cuda_stream)."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    for attr in ("ptr", "cuda_stream", "handle"):
        v = getattr(stream, attr, None)
        if isinstance(v, int):
            return v or None
    raise TypeError("stream: %r is not a CUDA stream (an int, a CuPy or PyTorch stream)" % (stream,))


def _bc_codes(bc, is3d):
    faces = list(_api.FACES)
    codes = {f: 0 for f in faces}

    def code(name):
        try:
            return _api.BCS[str(name).lower()]
        except KeyError:
            raise ValueError("bc: %r is not one of %s" % (name, ", ".join(_api.BCS))) from None

    if bc is None:
        pass
    elif isinstance(bc, str):
        for f in faces:
            codes[f] = code(bc)
    elif isinstance(bc, dict):
        for key, name in bc.items():
            if key in ("x", "y", "z"):
                codes[key + "-"] = codes[key + "+"] = code(name)
            elif key in codes:
                codes[key] = code(name)
            else:
                raise ValueError("bc: key %r: faces are %s, axes x, y, z" % (key, ", ".join(faces)))
    else:
        seq = list(bc)
        if len(seq) not in (4, 6) or (is3d and len(seq) != 6):
            raise ValueError("bc: %d entries: one per face, x-, x+, y-, y+ (, z-, z+ in 3D)" % len(seq))
        for f, name in zip(faces, seq):
            codes[f] = code(name)
    return [codes[f] for f in faces]


def _per_axis(v, name, what, is3d):
    """(v,) * 3 for a number, else a tuple of 2 (2D) or 3 floats (x first)."""
    vs = (float(v),) * 3 if isinstance(v, _numbers.Real) else tuple(float(x) for x in v)
    if len(vs) not in (2, 3) or (is3d and len(vs) != 3):
        raise ValueError("%s: %r: %s, or one per axis (x, y%s)" % (name, v, what, ", z" if is3d else "[, z]"))
    return vs


def make_config(size, **kw):
    """The pgpu_config of a grid of `size` = (nx, ny) or (nx, ny, nz) interior
    points (x first) and the keyword arguments (see the module's help)."""
    unknown = set(kw) - set(_KEYS)
    if unknown:
        raise TypeError("unknown keyword argument(s): %s (known: %s)" % (", ".join(sorted(unknown)),
                                                                        ", ".join(_KEYS)))
    size = tuple(int(n) for n in size)
    if len(size) not in (2, 3):
        raise ValueError("size: %r: (nx, ny) or (nx, ny, nz)" % (size,))
    nx, ny = size[0], size[1]
    nz = size[2] if len(size) == 3 else 1
    c = _api.lib().pgpu_config_default(nx, ny, nz)
    method = kw.get("method", "fmg")
    precision = kw.get("precision", "double")
    if method not in _api.METHODS:
        raise ValueError("method: %r is not one of %s" % (method, ", ".join(_api.METHODS)))
    if precision not in _api.PRECISIONS:
        raise ValueError("precision: %r is not one of %s" % (precision, ", ".join(_api.PRECISIONS)))
    c.flags = _api.METHODS[method] | _api.PRECISIONS[precision]
    if kw.get("wcycle"):
        c.flags |= _api.WCYCLE
    if kw.get("fixed"):
        c.flags |= _api.FIXED
    if kw.get("pipelined"):
        c.flags |= _api.PIPELINED
    pre = kw.get("preconditioner", "default")
    if pre not in _api.PRECONDITIONERS:
        raise ValueError("preconditioner: %r is not one of %s" % (pre, ", ".join(_api.PRECONDITIONERS)))
    c.preconditioner = _api.PRECONDITIONERS[pre]
    for i, v in enumerate(_bc_codes(kw.get("bc"), nz > 1)):
        c.bc[i] = v
    h, length = kw.get("h"), kw.get("length")
    if h is not None and length is not None:
        raise ValueError("h and length: give one of them (the spacing follows from the length and the faces)")
    if h is not None:
        hs = _per_axis(h, "h", "a spacing", nz > 1)
        c.hx, c.hy = hs[0], hs[1]
        c.hz = hs[2] if len(hs) > 2 else c.hz
    else:
        # The box's lengths (1 by default) and each axis' faces give its
        # spacing (pgpu_config_set_domain).
        ls = _per_axis(1.0 if length is None else length, "length", "a length", nz > 1)
        st = _api.lib().pgpu_config_set_domain(_ct.byref(c), ls[0], ls[1], ls[2] if len(ls) > 2 else 1.0)
        if st != _api.SUCCESS:
            _raise(st, None, what="config")
    for name in ("tolerance", "omega"):
        if kw.get(name) is not None:
            setattr(c, name, float(kw[name]))
    for name in ("max_iterations", "pre_smooth", "post_smooth", "check_interval"):
        if kw.get(name) is not None:
            setattr(c, name, int(kw[name]))
    strides = kw.get("strides")
    if strides is not None:
        c.stride_y, c.stride_z = int(strides[0]), int(strides[1]) if len(strides) > 1 else 0
    c.stream = _stream_handle(kw.get("stream"))
    return c


def workspace_size(size, **kw):
    """The device memory, in bytes, a Solver(size, **kw) would allocate on the
    current device (pgpu_workspace_size: allocates nothing; needs a device)."""
    c = make_config(size, **kw)
    n = _ct.c_size_t(0)
    st = _api.lib().pgpu_workspace_size(_ct.byref(c), _ct.byref(n))
    if st != _api.SUCCESS:
        _raise(st, None, what="workspace_size")
    return n.value


def _config_for(u, kw):
    """size and keywords for an array laid out as u (precision from its
    dtype unless given; strides from the array)."""
    d = _describe(u, "u")
    nx, ny, nz, sy, sz = _layout(d, "u")
    kw = dict(kw)
    if kw.get("precision") is None:
        kw["precision"] = "float" if d.dtype == "float32" else "double"
    kw.setdefault("strides", (sy, sz))
    return ((nx, ny, nz) if len(d.shape) == 3 else (nx, ny)), kw


# ---- the solver -------------------------------------------------------------------

class Solver:
    """A handle (pgpu_solver): created once per grid and config, it holds all
    the device memory; solve() many times.  Solver(size, **config), or
    Solver.for_array(u, **config) to take the size, precision and strides
    from an array."""

    def __init__(self, size, **kw):
        self._h = None
        self._monitor = None
        self._lock = _threading.RLock()  # the C calls take turns (ctypes lets other threads run)
        self._size = tuple(int(n) for n in size)
        monitor = kw.pop("monitor", None)
        self._cfg = make_config(size, **kw)
        h = _ct.c_void_p()
        st = _api.lib().pgpu_create(_ct.byref(self._cfg), _ct.byref(h))
        if st != _api.SUCCESS:
            _raise(st, None, what="Solver")
        self._h = h
        c = _api.Config()
        _api.lib().pgpu_get_config(self._h, _ct.byref(c))
        self._cfg = c
        if monitor is not None:
            self.set_monitor(monitor)

    @classmethod
    def for_array(cls, u, **kw):
        size, kw = _config_for(u, kw)
        return cls(size, **kw)

    # lifetime
    def close(self):
        """Frees the device memory now (pgpu_destroy); also on garbage collection."""
        lock = getattr(self, "_lock", None)
        if lock is None:  # (__init__ failed before the handle)
            return
        with lock:
            if self._h is not None and _api._lib is not None:
                _api.lib().pgpu_destroy(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if self._h is None:
            raise ValueError("the solver is closed")
        return self._h

    # what it holds
    @property
    def config(self):
        """The config in use, defaults resolved (pgpu_get_config), as a dict."""
        c = self._cfg
        out = {name: getattr(c, name) for name, _ in _api.Config._fields_ if name not in ("bc", "stream")}
        names = {v: k for k, v in _api.BCS.items()}
        out["bc"] = {f: names.get(c.bc[i], c.bc[i]) for i, f in enumerate(_api.FACES)}
        out["stream"] = c.stream or 0
        return out

    @property
    def workspace_bytes(self):
        """Device memory held, in bytes (pgpu_workspace_bytes)."""
        with self._lock:
            return _api.lib().pgpu_workspace_bytes(self._handle())

    @property
    def stream(self):
        s = _ct.c_void_p()
        with self._lock:
            _api.lib().pgpu_get_stream(self._handle(), _ct.byref(s))
        return s.value or 0

    def set_stream(self, stream):
        """All later work goes to `stream` (an int, a CuPy or PyTorch stream)."""
        with self._lock:
            st = _api.lib().pgpu_set_stream(self._handle(), _stream_handle(stream))
            if st != _api.SUCCESS:
                _raise(st, self._h, what="set_stream")

    def set_monitor(self, fn):
        """fn(iteration, residual_norm, relative_residual) at each convergence
        check of later solves; None removes it.  An exception fn raises is
        printed (by ctypes) and the solve goes on."""
        cb = _api.MONITOR(lambda _user, it, rn, rel: fn(it, rn, rel)) if fn is not None else _api.MONITOR()
        with self._lock:
            st = _api.lib().pgpu_set_monitor(self._handle(), cb, None)
            if st != _api.SUCCESS:
                _raise(st, self._h, what="set_monitor")
            self._monitor = cb  # kept alive while installed

    # the arrays
    def _check(self, a, name, want_device, writable):
        c = self._cfg
        want = "float32" if c.flags & _api.PRECISIONS["float"] else "float64"
        return _check_array(a, name, (c.nx, c.ny, c.nz), want, (c.stride_y, c.stride_z), want_device, writable,
                            "this solver's", stream=self.stream or 1)

    def solve(self, u, f):
        """Solves in place: u's interior becomes the solution (its ghosts hold
        the boundary data and are left as they were).  Device arrays go to
        pgpu_solve, host arrays to pgpu_solve_host.  Returns a Report; a
        failure raises (NOT_CONVERGED and BREAKDOWN with .report)."""
        du = self._check(u, "u", None, True)
        df = self._check(f, "f", du.device, False)
        rep = _api.CReport()
        with self._lock:
            if du.device:
                st = _api.lib().pgpu_solve(self._handle(), du.ptr, df.ptr, _ct.byref(rep))
            else:
                st = self._solve_host(u, f, du, df, rep)
            if st != _api.SUCCESS:
                # A report only where the solve ran (C fills it then).
                _raise(st, self._h, Report(rep) if st in (6, 7) else None, what="solve")
        return Report(rep)

    def _span(self):
        """The elements pgpu_solve_host copies from each pointer."""
        c = self._cfg
        return c.stride_z * (c.nz + 2) if c.nz > 1 else c.stride_y * (c.ny + 2)

    def _solve_host(self, u, f, du, df, rep):
        """pgpu_solve_host, through packed copies where an array ends before
        the span the library copies (a view into a larger array: the
        library would read and write past its end)."""
        span = self._span()

        def extent(d):
            return 1 + sum((n - 1) * s for n, s in zip(d.shape, d.strides))

        lib = _api.lib()
        if extent(du) >= span and extent(df) >= span:
            return lib.pgpu_solve_host(self._handle(), du.ptr, df.ptr, _ct.byref(rep))
        try:
            import numpy as np
        except ImportError:
            raise TypeError("u, f: a host array that ends before the span the library copies (a view into a "
                            "larger array) needs NumPy for the copy; pass whole arrays") from None

        def host(d):  # a writable NumPy view of the described memory (whatever exported it)
            n = extent(d)
            flat = np.frombuffer((_ct.c_char * (n * d.itemsize)).from_address(d.ptr), dtype=d.dtype, count=n)
            strides = tuple(s * d.itemsize for s in d.strides)
            return np.lib.stride_tricks.as_strided(flat, shape=d.shape, strides=strides)

        ua, fa = host(du), host(df)
        if np.shares_memory(ua, fa):
            raise InvalidArgumentError(1, "u and f overlap", None, "solve")

        def packed(a, d):
            buf = np.zeros(span, dtype=a.dtype)
            v = np.lib.stride_tricks.as_strided(buf, shape=a.shape, strides=tuple(s * d.itemsize for s in d.strides))
            v[...] = a
            return buf, v

        bu, vu = packed(ua, du)
        bf, _ = packed(fa, df)
        st = lib.pgpu_solve_host(self._handle(), bu.ctypes.data, bf.ctypes.data, _ct.byref(rep))
        if st in (_api.SUCCESS, 6, 7):
            ua[...] = vu
        return st

    def residual(self, u, f):
        """||b - A u|| / ||b|| of device arrays (pgpu_residual)."""
        du = self._check(u, "u", True, False)
        df = self._check(f, "f", True, False)
        out = _ct.c_double()
        with self._lock:
            st = _api.lib().pgpu_residual(self._handle(), du.ptr, df.ptr, _ct.byref(out))
            if st != _api.SUCCESS:
                _raise(st, self._h, what="residual")
        return out.value

    def set_mask(self, mask):
        """Cell types, a uint8 device array laid out as u (CELL_FLUID,
        CELL_DIRICHLET, CELL_SOLID); None removes it."""
        ptr = None
        if mask is not None:
            c = self._cfg
            ptr = _check_array(mask, "mask", (c.nx, c.ny, c.nz), "uint8", (c.stride_y, c.stride_z), True, False,
                               "this solver's").ptr
        with self._lock:
            st = _api.lib().pgpu_set_mask(self._handle(), ptr)
            if st != _api.SUCCESS:
                _raise(st, self._h, what="set_mask")

    def set_coefficients(self, beta):
        """beta of -div(beta grad u) = f, a device array laid out as u in
        u's precision; None removes it."""
        ptr = None
        if beta is not None:
            ptr = self._check(beta, "beta", True, False).ptr
        with self._lock:
            st = _api.lib().pgpu_set_coefficients(self._handle(), ptr)
            if st != _api.SUCCESS:
                _raise(st, self._h, what="set_coefficients")


def _check_array(a, name, size, dtype, strides, want_device, writable, whose, stream=None, ndim=None):
    """The array a described, after checking that it is laid out as `whose`
    grid: size (nx, ny, nz), dtype, strides (stride_y, stride_z), device or
    host (want_device None: either), writable, and ndim axes where given."""
    d = _describe(a, name, stream=stream)
    nx, ny, nz, sy, sz = _layout(d, name)
    if (nx, ny, nz) != tuple(size) or (ndim is not None and len(d.shape) != ndim):
        raise ValueError("%s: shape %s holds %dx%dx%d interior points; %s grid is %dx%dx%d"
                         % ((name, d.shape, nx, ny, nz, whose) + tuple(size)))
    if d.dtype != dtype:
        raise TypeError("%s: %s; %s %s are %s" % (name, d.dtype, whose, "masks" if dtype == "uint8" else "arrays",
                                                 dtype))
    if sy != strides[0] or (nz > 1 and sz != strides[1]):
        raise ValueError("%s: strides (%d, %d) elements; %s are (%d, %d): create the solver with "
                         "Solver.for_array(%s) or strides=" % (name, sy, sz, whose, strides[0], strides[1], name))
    if want_device is not None and d.device != want_device:
        raise TypeError("u and f must both be device arrays or both host arrays" if name in ("u", "f")
                        else "%s: a device array" % name)
    if writable and d.readonly:
        raise ValueError("%s is read-only" % name)
    return d


def solve(u, f, **kw):
    """Solves once: a Solver for u's size, precision and strides, a solve,
    the device memory freed again.  Keep a Solver for repeated solves.  f
    is checked against u before any handle is created: a mismatch is the
    caller's, whatever the machine."""
    du = _describe(u, "u")
    nx, ny, nz, sy, sz = _layout(du, "u")
    _check_array(f, "f", (nx, ny, nz), du.dtype, (sy, sz), du.device, False, "u's", ndim=len(du.shape))
    precision = kw.get("precision")
    if precision is not None:
        want = "float32" if precision == "float" else "float64"
        if precision in _api.PRECISIONS and du.dtype != want:
            raise TypeError("u: %s; precision=%r takes %s arrays" % (du.dtype, precision, want))
    with Solver.for_array(u, **kw) as s:
        return s.solve(u, f)
