"""The package on a GPU (each test skips without a device, or without the
array library it uses): a manufactured problem solved from CuPy arrays,
PyTorch tensors (through __cuda_array_interface__ and through DLPack) and
NumPy arrays (pgpu_solve_host), in float and double, 2D and 3D, padded
strides; errors with their status, detail and report; the workspace query
against the handle; streams."""
import math

import pytest

import poisson_gpu as pg

np = pytest.importorskip("numpy")


def manufactured(n, dims, dtype):
    """u = prod sin(pi x), f = dims pi^2 u on the unit square/cube, h = 1/(n+1),
    as NumPy arrays with ghosts (zero boundary)."""
    h = 1.0 / (n + 1)
    x = np.arange(n + 2) * h
    s = np.sin(np.pi * x)
    if dims == 2:
        exact = s[:, None] * s[None, :]
    else:
        exact = s[:, None, None] * s[None, :, None] * s[None, None, :]
    f = (dims * np.pi ** 2 * exact).astype(dtype)
    return exact, f, np.zeros_like(f)


def max_error(u, exact):
    inner = (slice(1, -1),) * u.ndim
    return float(np.abs(np.asarray(u, dtype=np.float64)[inner] - exact[inner]).max())


@pytest.mark.parametrize("dims, dtype, method", [(3, "float64", "fmg"), (3, "float32", "fmg"),
                                                 (2, "float64", "fft"), (3, "float64", "vcycle")])
def test_numpy_host_arrays(device, dims, dtype, method):
    n = 31
    exact, f, u = manufactured(n, dims, dtype)
    rep = pg.solve(u, f, method=method)
    assert rep.status == "PGPU_SUCCESS"
    assert max_error(u, exact) < 2e-3  # the discretisation error at h = 1/32 is ~1e-3
    assert np.all(u[0] == 0) and np.all(u[-1] == 0)  # ghosts untouched


def test_cupy(device):
    cp = pytest.importorskip("cupy")
    n = 63
    exact, f, u = manufactured(n, 3, "float64")
    du, df = cp.asarray(u), cp.asarray(f)
    with pg.Solver.for_array(du, method="fmg") as s:
        rep = s.solve(du, df)
        assert rep.status == "PGPU_SUCCESS" and rep.iterations == 0
        assert max_error(cp.asnumpy(du), exact) < 5e-4
        assert s.workspace_bytes == pg.workspace_size((n, n, n), method="fmg")
        assert math.isclose(s.residual(du, df), rep.relative_residual, rel_tol=1e-6)
    # float, 2D, padded rows
    exact, f, _ = manufactured(n, 2, "float32")
    big = cp.zeros((n + 2, n + 10), dtype=cp.float32)
    fu = big[:, : n + 2]
    fbig = cp.zeros_like(big)
    fbig[:, : n + 2] = cp.asarray(f)
    rep = pg.solve(fu, fbig[:, : n + 2], method="vcycle")
    assert rep.status == "PGPU_SUCCESS"
    assert max_error(cp.asnumpy(fu), exact) < 1e-3


def test_torch_cuda_array_interface_and_dlpack(device):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    n = 47
    exact, f, u = manufactured(n, 3, "float32")
    tu = torch.from_numpy(u).cuda()
    tf = torch.from_numpy(f).cuda()
    stream = torch.cuda.current_stream()
    rep = pg.solve(tu, tf, method="fmg", stream=stream)
    torch.cuda.synchronize()
    assert rep.status == "PGPU_SUCCESS"
    assert max_error(tu.cpu().numpy(), exact) < 1e-3

    class DLPackOnly:  # the DLPack path, as JAX arrays take it
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    tu.zero_()
    rep = pg.solve(DLPackOnly(tu), DLPackOnly(tf), method="fmg", precision="float")
    torch.cuda.synchronize()
    assert rep.status == "PGPU_SUCCESS"
    assert max_error(tu.cpu().numpy(), exact) < 1e-3


def test_errors_carry_status_detail_and_report(device):
    n = 15
    exact, f, u = manufactured(n, 3, "float64")
    with pg.Solver((n, n, n), method="jacobi", max_iterations=5, check_interval=1) as s:
        with pytest.raises(pg.NotConvergedError) as e:
            s.solve(u, f)
        assert e.value.report is not None and e.value.report.iterations == 5
        assert e.value.status_name == "PGPU_ERROR_NOT_CONVERGED"
    f[5, 5, 5] = math.nan
    with pytest.raises(pg.NonfiniteInputError) as e:
        pg.solve(u, f)
    assert e.value.status == 8
    with pg.Solver((n, n, n)) as s:
        with pytest.raises(ValueError):
            s.solve(np.zeros((n + 2, n + 2, n + 3)), np.zeros((n + 2, n + 2, n + 3)))
        with pytest.raises(TypeError):
            s.solve(np.zeros((n + 2,) * 3, dtype=np.float32), np.zeros((n + 2,) * 3, dtype=np.float32))


def test_monitor_and_workspace(device):
    n = 31
    _, f, u = manufactured(n, 3, "float64")
    seen = []
    with pg.Solver((n, n, n), method="vcycle", monitor=lambda it, rn, rel: seen.append((it, rel))) as s:
        rep = s.solve(u, f)
        assert seen and seen[-1][1] <= 1e-10 and len(seen) >= rep.iterations
        assert s.config["tolerance"] == 1e-10 and s.config["bc"]["x-"] == "dirichlet"
    for kw in (dict(method="fft"), dict(method="fmg", precision="mixed"), dict(method="rbgs", precision="float")):
        with pg.Solver((n, n, n), **kw) as s:
            assert s.workspace_bytes == pg.workspace_size((n, n, n), **kw)
