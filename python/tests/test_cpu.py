"""The package without a GPU: the library loads, the structs match the C
layout, keyword arguments become configs (and wrong ones are refused before
any C call), the C API's argument checks come back as exceptions with the
status and the detail, arrays are described correctly (NumPy, DLPack, the
CUDA array interface of a stand-in object), and without a device the
answer is NoDeviceError.  Runs in CI."""
import ctypes
import math

import pytest

import poisson_gpu as pg
from poisson_gpu import _api
from poisson_gpu._arrays import describe, layout

np = pytest.importorskip("numpy")


def test_library_version_matches_package():
    assert pg.library_version() == tuple(int(v) for v in pg.__version__.split("."))


def test_struct_layout():
    # As a C compiler lays out pgpu_config on LP64: 3 int64, 3 double,
    # 2 int64 (64 bytes), flags and bc[6] (92), tolerance at 96, then
    # max_iterations, omega at 112, three ints, the stream pointer at 136,
    # the preconditioner (an enum) at 144, padded to 152.
    assert ctypes.sizeof(_api.Config) == 152
    assert _api.Config.preconditioner.offset == 144
    assert (_api.Config.tolerance.offset, _api.Config.omega.offset, _api.Config.stream.offset) == (96, 112, 136)
    # pgpu_report: int, 5 double from 8, status and singular at 48, rhs_mean
    # at 56, refinements and projected: 72 bytes.
    assert ctypes.sizeof(_api.CReport) == 72
    assert (_api.CReport.status.offset, _api.CReport.rhs_mean.offset, _api.CReport.projected.offset) == (48, 56, 68)


def test_config_default_through_the_c_struct():
    c = _api.lib().pgpu_config_default(5, 6, 7)
    assert (c.nx, c.ny, c.nz) == (5, 6, 7)
    assert (c.hx, c.hy, c.hz) == (1 / 6, 1 / 7, 1 / 8)
    assert c.flags == _api.METHODS["fmg"] | _api.PRECISIONS["double"]
    assert list(c.bc) == [0] * 6
    assert (c.stride_y, c.stride_z, c.tolerance, c.max_iterations, c.omega) == (0, 0, 0.0, 0, 0.0)
    assert (c.pre_smooth, c.post_smooth, c.check_interval, c.stream) == (0, 0, 0, None)


def test_keywords_become_the_config():
    c = pg.make_config((9, 8), method="rbgs", precision="float", h=0.5, bc={"x": "periodic", "y+": "neumann"},
                       tolerance=1e-6, max_iterations=50, omega=1.5, check_interval=3, fixed=True, stream=7,
                       strides=(16, 0))
    assert (c.nx, c.ny, c.nz) == (9, 8, 1)
    assert c.flags == _api.METHODS["rbgs"] | _api.PRECISIONS["float"] | _api.FIXED
    assert (c.hx, c.hy) == (0.5, 0.5)
    assert list(c.bc)[:4] == [2, 2, 0, 1]
    assert (c.tolerance, c.max_iterations, c.omega, c.check_interval) == (1e-6, 50, 1.5, 3)
    assert c.stream == 7 and c.stride_y == 16
    c = pg.make_config((4, 4, 4), bc=["neumann"] * 6, wcycle=True, method="vcycle")
    assert list(c.bc) == [1] * 6 and c.flags & _api.WCYCLE


@pytest.mark.parametrize("kw, exc", [
    (dict(method="multigrid"), ValueError),
    (dict(precision="half"), ValueError),
    (dict(bc="robin"), ValueError),
    (dict(bc=["dirichlet"] * 4), ValueError),  # 3D needs six
    (dict(bc={"w": "periodic"}), ValueError),
    (dict(tolerence=1e-6), TypeError),
    (dict(stream="fast"), TypeError),
])
def test_bad_keywords_are_refused_in_python(kw, exc):
    with pytest.raises(exc):
        pg.make_config((4, 4, 4), **kw)


@pytest.mark.parametrize("size, kw, words", [
    ((8, 8, 8), dict(tolerance=-1), "tolerance"),
    ((8, 8, 8), dict(omega=2.5), "omega"),
    ((0, 8, 8), {}, "grid size"),
    ((8, 8, 8), dict(h=-1.0), "hx"),
    ((8, 8, 8), dict(strides=(5, 0)), "stride_y"),
    ((8, 8, 8), dict(bc={"x-": "periodic"}), "periodic"),
    ((8, 8, 8), dict(method="jacobi", wcycle=True), "PGPU_WCYCLE"),
])
def test_the_c_checks_come_back_as_invalid_argument(size, kw, words):
    with pytest.raises(pg.InvalidArgumentError) as e:
        pg.workspace_size(size, **kw)
    assert e.value.status == 1 and e.value.status_name == "PGPU_ERROR_INVALID_ARGUMENT"
    assert words in e.value.detail
    assert isinstance(e.value, ValueError) and isinstance(e.value, pg.PoissonGPUError)


def test_unsupported():
    with pytest.raises(pg.UnsupportedError) as e:
        pg.workspace_size((8, 8, 8), method="jacobi", precision="mixed")
    assert "PGPU_MIXED" in e.value.detail
    # every face set is the FFT's: two axes mixing Dirichlet and Neumann pass
    # the config's checks (without a device cuFFT's sizing then says so)
    try:
        size = pg.workspace_size((8, 8, 8), method="fft", bc={"x-": "neumann", "y+": "neumann"})
        assert size > 0
    except pg.NoDeviceError:
        pass


@pytest.mark.parametrize("size, bc, length, want", [
    ((8, 6, 5), None, None, (1 / 9, 1 / 7, 1 / 6)),
    ((8, 6, 5), "neumann", None, (1 / 8, 1 / 6, 1 / 5)),
    ((8, 6, 5), {"x": "periodic", "z-": "neumann"}, (2.0, 3.0, 0.5), (2 / 8, 3 / 7, 0.5 / 5.5)),
    ((8, 6), {"y+": "neumann"}, 4.0, (4 / 9, 4 / 6.5)),
])
def test_spacing_follows_the_faces(size, bc, length, want):
    kw = {} if length is None else dict(length=length)
    c = pg.make_config(size, bc=bc, **kw)
    got = (c.hx, c.hy, c.hz)[:len(want)]
    assert all(math.isclose(g, w, rel_tol=1e-15) for g, w in zip(got, want)), (got, want)


def test_spacing_errors():
    with pytest.raises(ValueError):
        pg.make_config((8, 8, 8), h=0.1, length=1.0)
    with pytest.raises(pg.InvalidArgumentError) as e:
        pg.make_config((8, 8, 8), length=-1.0)
    assert "lx" in e.value.detail
    with pytest.raises(ValueError):
        pg.make_config((8, 8, 8), length=(1.0,))


@pytest.mark.parametrize("fshape, fdtype, exc", [
    ((10, 10, 11), "float64", ValueError),
    ((10, 12), "float64", ValueError),
    ((10, 10, 10), "float32", TypeError),
])
def test_solve_checks_both_arrays_before_a_handle(fshape, fdtype, exc):
    # a wrong f is the caller's error on any machine, not NoDeviceError
    u = np.zeros((10, 10, 10))
    with pytest.raises(exc):
        pg.solve(u, np.zeros(fshape, dtype=fdtype))


def test_no_device_answers_no_device(no_device):
    with pytest.raises(pg.NoDeviceError) as e:
        pg.Solver((8, 8, 8))
    assert e.value.status == 5 and e.value.detail.startswith("no CUDA device: ")
    with pytest.raises(pg.NoDeviceError):
        pg.workspace_size((8, 8, 8))
    u = np.zeros((10, 10, 10))
    with pytest.raises(pg.NoDeviceError):
        pg.solve(u, np.zeros_like(u))


def test_numpy_arrays_are_described():
    base = np.zeros((12, 11, 20))
    u = base[:, :, 2:12]  # padded rows: x contiguous, stride 20 elements
    d = describe(u)
    assert not d.device and d.dtype == "float64" and d.shape == (12, 11, 10) and d.strides == (220, 20, 1)
    assert layout(d) == (8, 9, 10, 20, 220)
    d = describe(np.zeros((7, 9), dtype=np.float32))
    assert d.dtype == "float32" and layout(d)[:3] == (7, 5, 1)
    with pytest.raises(ValueError):
        layout(describe(np.zeros((5, 5, 5))[:, :, ::2]))  # x not contiguous
    with pytest.raises(ValueError):
        layout(describe(np.zeros((5, 2, 5))))  # no interior point
    with pytest.raises(TypeError):
        describe(np.zeros((5, 5), dtype=np.int32))
    with pytest.raises(TypeError):
        describe([[0.0] * 5] * 5)


def test_dlpack_arrays_are_described():
    if not hasattr(np.zeros(1), "__dlpack__"):
        pytest.skip("this NumPy has no __dlpack__")

    class OnlyDLPack:  # hides NumPy's __array_interface__
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)[1:4]
    d = describe(OnlyDLPack(a))
    assert not d.device and d.dtype == "float32" and d.shape == (3, 6, 7) and d.strides == (42, 7, 1)
    assert d.ptr == a.__array_interface__["data"][0]


def test_cuda_array_interface_is_described():
    class FakeDeviceArray:  # what CuPy and PyTorch expose
        __cuda_array_interface__ = {"shape": (6, 5, 4), "typestr": "<f8", "data": (123456, False),
                                    "strides": (5 * 8 * 8, 8 * 8, 8), "version": 3}

    d = describe(FakeDeviceArray())
    assert d.device and d.ptr == 123456 and d.strides == (40, 8, 1)
    assert layout(d) == (2, 3, 4, 8, 40)


def test_report_and_error_objects():
    r = _api.CReport()
    r.iterations, r.relative_residual, r.status, r.singular = 3, 1e-11, 6, 1
    rep = pg.Report(r)
    assert rep.iterations == 3 and rep.status == "PGPU_ERROR_NOT_CONVERGED" and rep.singular is True
    assert "iterations=3" in repr(rep)
    e = pg.NotConvergedError(6, "max_iterations = 5 reached", rep, what="solve")
    assert e.report is rep and "not converged" in str(e) and "max_iterations" in str(e)
    assert math.isclose(e.report.relative_residual, 1e-11)


def test_a_3d_array_needs_two_interior_planes():
    # (3, ny+2, nx+2) would be nz = 1, the 2D problem, which has no z ghosts
    with pytest.raises(ValueError, match="two interior planes"):
        layout(describe(np.zeros((3, 6, 7))))
    u = np.zeros((6, 7))
    with pytest.raises(ValueError):
        pg.solve(u, np.zeros((3, 6, 7)))


def test_spacing_per_axis_matches_the_grid():
    with pytest.raises(ValueError):
        pg.make_config((8, 8, 8), h=(0.5, 0.5))  # 3D: three spacings
    with pytest.raises(ValueError):
        pg.make_config((8, 8, 8), length=(1.0, 2.0))
    c = pg.make_config((8, 8), h=(0.5, 0.25))
    assert (c.hx, c.hy) == (0.5, 0.25)
    c = pg.make_config((8, 8, 8), h=np.float32(0.125))  # any real number
    assert (c.hx, c.hy, c.hz) == (0.125, 0.125, 0.125)


@pytest.mark.parametrize("dtype, precision", [("float32", "double"), ("float32", "mixed"), ("float64", "float")])
def test_solve_checks_the_precision_before_a_handle(dtype, precision):
    u = np.zeros((6, 6, 6), dtype=dtype)
    with pytest.raises(TypeError, match="precision"):
        pg.solve(u, np.zeros_like(u), precision=precision)
