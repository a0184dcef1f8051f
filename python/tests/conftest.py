"""Shared fixtures: whether a CUDA device is there (the GPU tests skip
without one), and the array libraries present (each GPU test skips without
its library)."""
import pytest

import poisson_gpu as pg


def _device_count():
    try:
        with pg.Solver((3, 3, 3)):
            return 1
    except pg.NoDeviceError:
        return 0


_HAVE_DEVICE = None


def have_device():
    global _HAVE_DEVICE
    if _HAVE_DEVICE is None:
        _HAVE_DEVICE = _device_count() > 0
    return _HAVE_DEVICE


@pytest.fixture
def device():
    if not have_device():
        pytest.skip("no CUDA device")


@pytest.fixture
def no_device():
    if have_device():
        pytest.skip("a CUDA device is present (this test checks the answer without one)")
