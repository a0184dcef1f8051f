#!/usr/bin/env python3
"""plot_2d.py -- a 2D solve from Python, plotted with matplotlib.

A plate on the unit square, 255 x 255 interior points (h = 1/256), with two
heat sources and a sink (Gaussians in f), held at u = 0 on the left and
right edges and at u = 1 along the bottom edge (Dirichlet: the values sit
in u's ghost row), insulated at the top (Neumann, du/dn = 0).  Solved with
NumPy arrays from the host (poisson_gpu copies them to the device and back)
by the method named on the command line (fmg unless given; fft works too:
only the y axis mixes Dirichlet and Neumann).  Prints the report, and
writes the solution as plot_2d.png when matplotlib is installed (else says
so and plots nothing).

    python3 samples/plot_2d.py [fmg|vcycle|fft|rbgs|jacobi] [out.png]

Needs the poisson_gpu package (pip install . at the repository's top) and
NumPy.  Exit status: 0 done, 1 a failure, 77 no CUDA device (skipped).
"""
import sys

try:
    import numpy as np
except ImportError:
    sys.exit("plot_2d.py needs NumPy (pip install numpy)")
try:
    import poisson_gpu as pg
except ImportError:
    sys.exit("plot_2d.py needs the poisson_gpu package (pip install . at the repository's top)")


def main():
    method = sys.argv[1] if len(sys.argv) > 1 else "fmg"
    path = sys.argv[2] if len(sys.argv) > 2 else "plot_2d.png"
    n = 255
    # The unit square: x between two Dirichlet walls (h = 1/(n+1)), y from a
    # Dirichlet wall at 0 to a Neumann face at 1 (h = 1/(n+1/2)); the
    # package derives the same spacings from length=1 and the faces.
    hx, hy = 1.0 / (n + 1), 1.0 / (n + 0.5)
    # Arrays are indexed [j, i] (y, x), one ghost layer per side.
    y, x = np.meshgrid(np.arange(n + 2) * hy, np.arange(n + 2) * hx, indexing="ij")
    f = np.zeros((n + 2, n + 2))
    for cx, cy, q in ((0.3, 0.6, 1.0), (0.7, 0.7, 1.0), (0.5, 0.3, -1.5)):
        f += q * 400.0 * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 0.005)
    u = np.zeros_like(f)
    u[0, :] = 1.0  # the bottom ghost row (j = 0): the wall's value, y = 0
    u[-1, :] = 0.0  # the top ghost row holds du/dn at the Neumann face: insulated
    bc = {"x": "dirichlet", "y-": "dirichlet", "y+": "neumann"}
    try:
        report = pg.solve(u, f, method=method, bc=bc, length=1.0)
    except pg.NoDeviceError as e:
        print("skipped: %s" % e.detail)
        return 77
    except pg.PoissonGPUError as e:
        print("solve failed: %s" % e)
        return 1
    print("%s %dx%d: %s, %d iterations, relative residual %.2e, %.2f ms on the device"
          % (method, n, n, report.status, report.iterations, report.relative_residual, report.seconds * 1e3))
    print("u: min %.4f, max %.4f" % (u[1:-1, 1:-1].min(), u[1:-1, 1:-1].max()))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return 0
    fig, ax = plt.subplots(figsize=(6, 5))
    im = ax.imshow(u[1:-1, 1:-1], origin="lower", extent=(h, 1 - h, h, 1 - h), cmap="inferno")
    ax.contour(x[1:-1, 1:-1], y[1:-1, 1:-1], u[1:-1, 1:-1], levels=12, colors="white", linewidths=0.5)
    ax.set_title("-Laplace(u) = f: u = 1 at the bottom, 0 left and right, insulated top")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    fig.colorbar(im, ax=ax, label="u")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
