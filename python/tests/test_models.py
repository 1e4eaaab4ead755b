"""kc.load on the bundled model and the reference models, against PyTorch's
outputs: |kc - torch| <= 1e-4 + 1e-4 |torch| elementwise, as the C++
conformance suite checks."""
import os

import numpy as np
import pytest

import kc
from conftest import BUNDLED, assert_close, numbered, reference_models


@pytest.mark.parametrize("optimize", [False, True], ids=["plain", "O"])
def test_bundled_model_matches_pytorch(optimize):
    model = kc.load(os.path.join(BUNDLED, "model.pnnx.param"), optimize=optimize, threads=1)
    inputs, expected = numbered(BUNDLED, "in"), numbered(BUNDLED, "out")
    outputs = model(*inputs)
    assert isinstance(outputs, tuple) and len(outputs) == len(expected) == 2
    for got, want in zip(outputs, expected):
        assert_close(got, want)


@pytest.mark.parametrize("directory", reference_models())
def test_reference_model_matches_pytorch(directory):
    model = kc.load(os.path.join(directory, "model.pnnx.param"), optimize=True, threads=2)
    inputs, expected = numbered(directory, "in"), numbered(directory, "out")
    assert [s.shape for s in model.inputs] == [a.shape for a in inputs]
    outputs = model.run(inputs)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert_close(got, want)
