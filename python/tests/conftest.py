"""Where the tests find models: the one bundled with kc, and the reference
models of $KC_MODELS_DIR (default ../shared/models beside the project)."""
import json
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUNDLED = os.path.join(ROOT, "examples", "cnn_basic")
MODELS_DIR = os.environ.get("KC_MODELS_DIR") or os.path.join(ROOT, "..", "shared", "models")


def numbered(directory, prefix):
    """prefix0.npy, prefix1.npy, ... as arrays, in order."""
    arrays = []
    while os.path.exists(os.path.join(directory, f"{prefix}{len(arrays)}.npy")):
        arrays.append(np.load(os.path.join(directory, f"{prefix}{len(arrays)}.npy")))
    return arrays


def reference_models():
    """The model directories of MODELS_DIR, or one skipped parameter saying why."""
    if not os.path.isdir(MODELS_DIR):
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"{MODELS_DIR} not found (set KC_MODELS_DIR)"))]
    names = sorted(n for n in os.listdir(MODELS_DIR)
                   if os.path.exists(os.path.join(MODELS_DIR, n, "model.pnnx.param")))
    return [pytest.param(os.path.join(MODELS_DIR, n), id=n) for n in names]


def assert_close(got, want, atol=1e-4, rtol=1e-4):
    """|got - want| <= atol + rtol * |want| elementwise, shapes and dtypes equal."""
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if got.dtype.kind == "f":
        excess = np.abs(got.astype(np.float64) - want) - (atol + rtol * np.abs(want))
        assert np.all(excess <= 0), f"worst excess {excess.max():.3g}"
    else:
        assert np.array_equal(got, want)
