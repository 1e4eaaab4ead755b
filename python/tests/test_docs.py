"""The Python examples of README.md and docs/python.md run as written, from
kc's source directory."""
import os
import re

import pytest

from conftest import ROOT


def blocks(doc):
    text = open(os.path.join(ROOT, doc)).read()
    return [pytest.param(b, id=f"{doc}:{i}")
            for i, b in enumerate(re.findall(r"^```python\n(.*?)^```$", text, re.M | re.S))]


@pytest.mark.parametrize("code", blocks("README.md") + blocks("docs/python.md"))
def test_example_runs(code, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    exec(compile(code, "<doc>", "exec"), {})
    assert "TensorSpec(name='0', shape=(1, 3, 32, 32), dtype=f32)" in capsys.readouterr().out
