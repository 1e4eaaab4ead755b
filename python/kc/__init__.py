"""kc: a graph compiler and interpreter for PNNX models.

    import numpy as np
    import kc

    model = kc.load("model.pnnx.param", optimize=True, threads=2)
    x = np.zeros(model.inputs[0].shape, dtype=model.inputs[0].dtype)
    y = model(x)                       # an array, or a tuple of them

kc.load reads the .pnnx.param and the .pnnx.bin beside it, runs kc's passes
and compiles the model; errors raise kc.Error with kc's message. The module
is described in kc's docs/python.md.
"""
from ._kc import (Error, Model, TensorSpec, __version__, default_pipeline, load,
                  load_pass_plugin, passes)

__all__ = ["Error", "Model", "TensorSpec", "__version__", "default_pipeline", "load",
           "load_pass_plugin", "passes"]
