"""Kernels on a busy machine: the serial and parallel builds of each row kernel agree bit for bit, and the
choice between them follows the work (timings are in bench/busy.py, not here)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import numpy as np
import pytest

from terrainview.kernels import erosion, generators, kernel_common, texturing
from terrainview.kernels.fractal import diamond_square

HEIGHTS = diamond_square(6, seed=4)


def kernel_cases():
    rows, fractions = texturing._sample_positions(96, HEIGHTS.shape[0])
    tiles = texturing._default_tiles(16, 0)
    low, band = float(HEIGHTS.min()), float(np.ptp(HEIGHTS)) / 5
    thresholds = texturing.band_thresholds(HEIGHTS)
    colors = np.array(texturing.BAND_COLORS, dtype=np.uint8)
    lines = generators._fault_lines_for(3, 50)
    flow = np.linspace(0.0, 1.0, HEIGHTS.size, dtype=np.float32).reshape(HEIGHTS.shape)  # erosion maps in use
    padded = np.pad(HEIGHTS[:-1, :-1].astype(np.float64) * 4.0, 1, mode="wrap")  # steep: material slides
    limits = np.full(8, 0.01)
    size = padded.shape[0] - 2
    share = np.pad(np.random.default_rng(1).random((size, size)), 1, mode="wrap")
    loss = np.random.default_rng(2).random((size, size))

    return {
        "blend": (texturing._BLEND, (HEIGHTS, rows, fractions, rows, fractions, low, band, tiles,
                                     tiles.reshape(tiles.shape[0], -1, 3).mean(axis=1), flow, flow, True)),
        "bands": (texturing._BANDS, (HEIGHTS, rows, fractions, rows, fractions, thresholds, colors, flow, True)),
        "fault": (generators._FAULT, (6, *lines, generators._fault_deltas(50), 0.0, 1.0)),
        "blur": (generators._PERIODIC_BLUR, (HEIGHTS, generators._gaussian_weights(1.5))),
        "thermal shares": (erosion._THERMAL_SHARES, (padded, limits, share, loss)),
        "thermal apply": (erosion._THERMAL_APPLY, (padded, limits, share, loss, np.zeros_like(padded))),
    }


@pytest.mark.parametrize("name", ["blend", "bands", "fault", "blur", "thermal shares", "thermal apply"])
def test_serial_and_parallel_builds_agree_bit_for_bit(name):
    (serial, parallel), args = kernel_cases()[name]
    a = serial(*args).copy()  # in-place kernels write into the arguments: keep the serial result aside
    b = parallel(*args)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def test_small_work_and_busy_cores_run_serially_and_large_work_in_parallel(monkeypatch):
    calls = []
    kernels = (lambda: calls.append("serial"), lambda: calls.append("parallel"))
    monkeypatch.setattr(kernel_common, "get_num_threads", lambda: 2)
    monkeypatch.setattr(kernel_common.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(kernel_common, "runnable_tasks", lambda: 1)  # only the caller runs
    kernel_common.run_rows(kernels, 64, kernel_common.PARALLEL_MIN_WORK - 1)
    kernel_common.run_rows(kernels, 64, kernel_common.PARALLEL_MIN_WORK)
    kernel_common.run_rows(kernels, 64, 2000, min_work=2000)  # a kernel of many short calls sets its own bar
    kernel_common.run_rows(kernels, 1, kernel_common.PARALLEL_MIN_WORK)  # one row: nothing to share
    monkeypatch.setattr(kernel_common, "runnable_tasks", lambda: 2)  # another task holds the second core
    kernel_common.run_rows(kernels, 64, kernel_common.PARALLEL_MIN_WORK)
    with kernel_common.every_call_parallel():  # warm-up compiles the parallel builds on a busy machine too
        kernel_common.run_rows(kernels, 64, 1)
    monkeypatch.setattr(kernel_common, "runnable_tasks", lambda: None)  # no count: every thread is free
    kernel_common.run_rows(kernels, 64, kernel_common.PARALLEL_MIN_WORK)
    monkeypatch.setattr(kernel_common, "get_num_threads", lambda: 1)
    kernel_common.run_rows(kernels, 64, kernel_common.PARALLEL_MIN_WORK)
    assert calls == ["serial", "parallel", "parallel", "serial", "serial", "parallel", "parallel", "serial"]
    assert kernel_common.parallel_bands(1) == 1 and kernel_common.parallel_bands(2) == 16


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="counts runnable tasks from Linux's /proc")
def test_busy_processes_are_counted_as_runnable():
    spinners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(2)]
    try:
        time.sleep(0.5)
        counts = [kernel_common.runnable_tasks() for _ in range(9)]
    finally:
        for process in spinners:
            process.kill()
            process.wait()
    assert statistics.median(counts) >= 3  # the two spinners and this thread


def test_waiting_threads_sleep_unless_told_otherwise():
    code = ("import os, terrainview.kernels.kernel_common as k; "
            "print(os.environ['OMP_WAIT_POLICY'], k.config.THREADING_LAYER_PRIORITY[0])")
    base = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    for given, expected in ((None, "PASSIVE omp"), ("ACTIVE", "ACTIVE omp")):
        env = base if given is None else {**base, "OMP_WAIT_POLICY": given}
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert result.stdout.split() == expected.split(), result.stderr
