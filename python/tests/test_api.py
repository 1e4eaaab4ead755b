"""The kc module's interface on the bundled model: specs, calls, arrays in
and out, bench, profile, IR and pipeline, errors, threads and the GIL."""
import os
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import kc
from conftest import BUNDLED, assert_close, numbered

PARAM = os.path.join(BUNDLED, "model.pnnx.param")


@pytest.fixture(scope="module")
def model():
    return kc.load(PARAM, threads=1, profile=True)


def test_specs(model):
    assert len(model.inputs) == 1 and len(model.outputs) == 2
    spec = model.inputs[0]
    assert spec.shape == (1, 3, 32, 32)
    assert spec.dtype == np.float32
    assert [o.shape for o in model.outputs] == [(1, 10), (1, 10)]
    assert "shape=(1, 3, 32, 32)" in repr(spec)


def test_outputs_own_kc_tensors_without_copy(model):
    x = numbered(BUNDLED, "in")[0]
    a, b = model(x)
    for out in (a, b):
        assert not out.flags.owndata and out.base is not None  # kc's tensor, not a copy
        assert out.flags.c_contiguous and out.flags.writeable
    # Each call returns new arrays; earlier ones keep their values.
    first = a.copy()
    model(np.zeros_like(x))
    assert np.array_equal(a, first)


def test_contiguous_inputs_are_not_copied(model):
    """NumPy reports its buffers to tracemalloc, kc's own allocations are not
    traced: a run on a C-contiguous input allocates no copy of it, a run on a
    Fortran-ordered one allocates one."""
    x = numbered(BUNDLED, "in")[0]
    model(x)

    def peak_bytes(a):
        tracemalloc.start()
        try:
            model(a)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    fortran = np.asfortranarray(x)
    assert peak_bytes(x) < x.nbytes // 4
    assert peak_bytes(fortran) >= x.nbytes


def test_inputs_of_any_layout(model):
    x = numbered(BUNDLED, "in")[0]
    want = model(x)
    # A Fortran-ordered, a strided and a misaligned copy of x: copied to a
    # contiguous array, same results.
    fortran = np.asfortranarray(x)
    strided = np.repeat(x, 2, axis=3)[..., ::2]
    raw = np.zeros(x.nbytes + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(x.shape)
    misaligned[...] = x
    for layout in (fortran, strided, misaligned):
        assert not layout.flags.c_contiguous or not layout.flags.aligned
        for got, w in zip(model(layout), want):
            assert np.array_equal(got, w)


def test_run_and_call_agree(model):
    x = numbered(BUNDLED, "in")[0]
    for got, want in zip(model.run([x]), model(x)):
        assert np.array_equal(got, want)


def test_other_batch_sizes_image_by_image(model):
    x = numbered(BUNDLED, "in")[0]
    rng = np.random.default_rng(5)
    y = rng.standard_normal(x.shape).astype(np.float32)
    both = model(np.concatenate([x, y]))
    for k, single in enumerate((model(x), model(y))):
        for got, want in zip(both, single):
            assert got.shape == (2, 10)
            np.testing.assert_allclose(got[k:k + 1], want, rtol=1e-5, atol=1e-5)


def test_bench(model):
    r = model.bench(runs=5, warmup=1)
    assert r["runs"] == 5
    assert 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"]
    with pytest.raises(kc.Error, match="runs must be positive"):
        model.bench(runs=0)


def test_profile(model):
    model(numbered(BUNDLED, "in")[0])
    steps = {p["name"]: p for p in model.profile()}
    conv = steps["convbn2d_0"]
    # The 3x3 convolution 3 -> 16 channels on 32x32 with its bias and ReLU.
    assert conv["op"] == "nn.Conv2d+nn.ReLU"
    assert conv["input_shapes"] == "f32[1,3,32,32]"
    assert conv["output_shapes"] == "f32[1,16,32,32]"
    assert conv["flops"] == 2 * 16 * 32 * 32 * 27 + 2 * 16 * 32 * 32
    assert conv["calls"] >= 1 and conv["ms"] > 0 and conv["gflops"] > 0
    # Cleared, the profile counts only the runs after.
    model.clear_profile()
    assert all(p["calls"] == 0 for p in model.profile())
    model(numbered(BUNDLED, "in")[0])
    model(numbered(BUNDLED, "in")[0])
    assert {p["name"]: p for p in model.profile()}["convbn2d_0"]["calls"] == 2
    with pytest.raises(kc.Error, match="profile=True"):
        kc.load(PARAM).profile()


def test_ir_pipeline_and_summary():
    plain = kc.load(PARAM, optimize=False)
    assert plain.pipeline == ""
    assert "fn @main(%0: f32[1,3,32,32])" in plain.ir
    opt = kc.load(PARAM, optimize=True, passes="cse")
    assert opt.pipeline.startswith(kc.default_pipeline().split(",")[0])
    assert opt.pipeline.endswith(",cse")
    assert "FLOPs per run: 3214374" in opt.summary()
    assert "cse" in dict(kc.passes())


def test_errors_carry_kc_messages(tmp_path):
    with pytest.raises(kc.Error, match=r"absent\.pnnx\.param: error: cannot read"):
        kc.load(str(tmp_path / "absent.pnnx.param"))
    bad = tmp_path / "bad.pnnx.param"
    bad.write_text("7767517\n2 2\npnnx.Input in 0 1 0 #0=(1,4)f33\npnnx.Output out 1 0 0\n")
    with pytest.raises(kc.Error, match=r"bad\.pnnx\.param:3:\d+: error: operand '0': unknown dtype 'f33'"):
        kc.load(str(bad))
    with pytest.raises(kc.Error, match="pass pipeline: unknown pass 'no-such-pass'"):
        kc.load(PARAM, passes="no-such-pass")
    model = kc.load(PARAM)
    with pytest.raises(kc.Error, match=r"must be f32 of rank 4 \(the model declares f32\[1,3,32,32\]\), got f64\[1,3,32,32\]"):
        model(np.zeros((1, 3, 32, 32)))
    with pytest.raises(kc.Error, match=r"at input shape f32\[1,5,32,32\]: nn.Conv2d 'convbn2d_0' \(line 4\)"):
        model(np.zeros((1, 5, 32, 32), np.float32))
    with pytest.raises(kc.Error, match=r"the model takes 1 input\(s\), got 2"):
        model(np.zeros((1, 3, 32, 32), np.float32), np.zeros(1, np.float32))
    with pytest.raises(kc.Error, match="cannot load pass plugin"):
        kc.load_pass_plugin(str(tmp_path / "absent.so"))
    assert issubclass(kc.Error, RuntimeError)


def test_runs_release_the_gil():
    """While one thread runs a model, another runs Python."""
    model = kc.load(PARAM, threads=1)
    x = numbered(BUNDLED, "in")[0]
    started, done = threading.Event(), threading.Event()

    def work():
        started.set()
        model.bench(runs=400, warmup=0, inputs=[x])
        done.set()

    # A thread holding the GIL keeps it for this long before it must let
    # another run: if the runs held it, this thread would first run once
    # `done` is set and count nothing.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.5)
    try:
        t = threading.Thread(target=work)
        t.start()
        started.wait()
        spins = 0
        while not done.is_set():
            spins += 1
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert spins > 1000


def test_one_model_from_many_threads():
    model = kc.load(PARAM, threads=1)
    inputs, expected = numbered(BUNDLED, "in"), numbered(BUNDLED, "out")
    want = model(*inputs)
    bad = []

    def work():
        for _ in range(20):
            for got, w in zip(model(*inputs), want):
                if not np.array_equal(got, w):
                    bad.append(1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    for got, w in zip(want, expected):
        assert_close(got, w)


def test_version():
    assert kc.__version__.count(".") == 2


def test_f16_model_takes_and_gives_f16():
    """An f16 model (test/ops/fixtures/half_cnn): f16 arrays in and out,
    computed in f32, within one half's step of PyTorch's f32 computation on
    the same f16 values."""
    fixture = os.path.join(os.path.dirname(PARAM), "..", "..", "test", "ops", "fixtures", "half_cnn")
    m = kc.load(os.path.join(fixture, "model.pnnx.param"))
    assert m.inputs[0].dtype == np.float16 and m.outputs[0].dtype == np.float16
    x, = numbered(fixture, "in")
    want, = numbered(fixture, "out")
    got = m(x)  # one output: the array itself
    assert_close(got, want, atol=1e-3, rtol=1e-3)
    with pytest.raises(kc.Error, match="must be f16"):
        m(x.astype(np.float32))
