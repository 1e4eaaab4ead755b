//===- Module.cpp - The kc Python module ----------------------------------===//
//
// `kc._kc`, re-exported by the `kc` package (python/kc/__init__.py):
// kc.load(path, ...) compiles a model; the model is called on NumPy arrays.
// docs/python.md describes it and why it is built with pybind11.
//
// Arrays go in without a copy when they are C-contiguous and aligned, and
// come out without one: each output array owns the tensor kc returned. The
// GIL is released while a model runs; calls from several threads run at
// the same time, on one model or several (CompiledModel::run is
// reentrant).
//
//===----------------------------------------------------------------------===//
#include "kc/IR/Printer.h"
#include "kc/IR/Summary.h"
#include "kc/IR/TypeInference.h"
#include "kc/IR/Verifier.h"
#include "kc/Import/ModuleLoader.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Support/Diagnostic.h"
#include "kc/Support/Version.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>

namespace py = pybind11;
using namespace kc;

namespace {

/// kc.Error, a RuntimeError carrying kc's message.
PyObject *kcError = nullptr;

[[noreturn]] void raise(const std::string &message) {
  PyErr_SetString(kcError, message.c_str());
  throw py::error_already_set();
}

/// Raises kc.Error with every message of `e`, placed at `file`.
[[noreturn]] void raise(llvm::StringRef file, llvm::Error e) {
  std::string message;
  llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase &info) {
    message += (message.empty() ? "" : "\n") + locateMessage(file, info.message());
  });
  raise(message);
}

/// The NumPy dtype of a kc element type, and back.
py::dtype numpyType(DType t) {
  switch (t) {
  case DType::F32:
    return py::dtype::of<float>();
  case DType::F64:
    return py::dtype::of<double>();
  case DType::F16:
    return py::dtype("float16");
  case DType::I64:
    return py::dtype::of<int64_t>();
  case DType::I32:
    return py::dtype::of<int32_t>();
  case DType::I16:
    return py::dtype::of<int16_t>();
  case DType::I8:
    return py::dtype::of<int8_t>();
  case DType::U8:
    return py::dtype::of<uint8_t>();
  case DType::Bool:
    return py::dtype("bool");
  default:
    raise("kc: no NumPy dtype for " + dtypeName(t).str());
  }
}

std::optional<DType> kcType(const py::dtype &d) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32, DType::I16, DType::I8,
                  DType::U8, DType::Bool})
    if (d.is(numpyType(t)) || d.equal(numpyType(t)))
      return t;
  return std::nullopt;
}

/// An input array as a tensor: its own bytes when they are C-contiguous and
/// aligned, else a C-contiguous copy (kept alive in `keep`).
rt::Tensor tensorOf(py::handle object, size_t index, std::vector<py::array> &keep) {
  py::array a = py::array::ensure(object);
  if (!a)
    raise("input " + std::to_string(index) + " is not an array");
  std::optional<DType> t = kcType(a.dtype());
  if (!t)
    raise("input " + std::to_string(index) + " has dtype " + std::string(py::str(a.dtype())) +
          ", which kc has no element type for");
  using npy = py::detail::npy_api;
  const int inPlace = npy::NPY_ARRAY_C_CONTIGUOUS_ | npy::NPY_ARRAY_ALIGNED_;
  if ((a.flags() & inPlace) != inPlace)
    a = py::array::ensure(a, py::array::c_style | py::array::forcecast);
  keep.push_back(a);
  rt::Shape shape(a.shape(), a.shape() + a.ndim());
  return rt::Tensor::view(*t, shape, const_cast<void *>(a.data()));
}

/// An output tensor as an array that owns it (no copy).
py::array arrayOf(const rt::Tensor &t) {
  auto *owned = new rt::Tensor(t);
  py::capsule owner(owned, [](void *p) { delete static_cast<rt::Tensor *>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array(numpyType(t.dtype()), shape, t.raw(), owner);
}

struct Spec {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype;
};

class Model {
public:
  Model(std::string path, ModulePtr module, std::unique_ptr<rt::CompiledModel> compiled,
        std::string pipeline, bool profiling)
      : path_(std::move(path)), module_(std::move(module)), compiled_(std::move(compiled)),
        pipeline_(std::move(pipeline)), profiling_(profiling) {}

  /// Runs on `inputs` with the GIL released.
  std::vector<rt::Tensor> run(const py::sequence &inputs) {
    std::vector<py::array> keep;
    std::vector<rt::Tensor> tensors;
    for (size_t i = 0; i < inputs.size(); ++i)
      tensors.push_back(tensorOf(inputs[i], i, keep));
    llvm::Expected<std::vector<rt::Tensor>> outs = std::vector<rt::Tensor>();
    {
      py::gil_scoped_release release;
      outs = compiled_->run(tensors);
    }
    if (!outs)
      raise(path_, outs.takeError());
    return std::move(*outs);
  }

  py::object call(const py::args &args) {
    std::vector<rt::Tensor> outs = run(args);
    if (outs.size() == 1)
      return arrayOf(outs[0]);
    py::tuple t(outs.size());
    for (size_t i = 0; i < outs.size(); ++i)
      t[i] = arrayOf(outs[i]);
    return t;
  }

  py::list runList(const py::sequence &inputs) {
    py::list l;
    for (const rt::Tensor &t : run(inputs))
      l.append(arrayOf(t));
    return l;
  }

  /// Times `runs` calls after `warmup` untimed ones, on `inputs` or seeded
  /// random ones of the declared shapes; milliseconds.
  py::dict bench(int runs, int warmup, std::optional<py::sequence> inputs) {
    if (runs <= 0 || warmup < 0)
      raise("bench: runs must be positive and warmup not negative");
    std::vector<py::array> keep;
    std::vector<rt::Tensor> tensors;
    if (inputs) {
      for (size_t i = 0; i < inputs->size(); ++i)
        tensors.push_back(tensorOf((*inputs)[i], i, keep));
    } else {
      std::mt19937 rng(0);
      std::normal_distribution<float> normal;
      for (const rt::TensorSpec &s : compiled_->inputSpecs()) {
        if (llvm::any_of(s.shape, [](int64_t d) { return d < 0; }))
          raise("bench: input %" + s.name + " has ? dims; give the inputs to time");
        rt::Tensor t = rt::Tensor::empty(s.dtype, s.shape);
        if (s.dtype == DType::F32)
          for (int64_t k = 0; k < t.numel(); ++k)
            t.data<float>()[k] = normal(rng);
        tensors.push_back(t);
      }
    }
    std::vector<double> ms;
    llvm::Error error = llvm::Error::success();
    {
      py::gil_scoped_release release;
      for (int i = 0; i < warmup + runs && !error; ++i) {
        auto start = std::chrono::steady_clock::now();
        auto outs = compiled_->run(tensors);
        std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
        if (!outs)
          error = outs.takeError();
        else if (i >= warmup)
          ms.push_back(took.count());
      }
    }
    if (error)
      raise(path_, std::move(error));
    std::sort(ms.begin(), ms.end());
    py::dict d;
    d["runs"] = runs;
    d["min_ms"] = ms.front();
    d["median_ms"] = ms[ms.size() / 2];
    d["max_ms"] = ms.back();
    return d;
  }

  py::list profile() const {
    if (!profiling_)
      raise("profile() needs a model loaded with kc.load(..., profile=True)");
    py::list l;
    for (const rt::OpProfile &p : compiled_->profile()) {
      py::dict d;
      int64_t calls = std::max<int64_t>(p.calls, 1);
      double ms = p.totalMs / double(calls);
      d["op"] = p.op;
      d["name"] = p.name;
      d["input_shapes"] = p.inputShapes;
      d["output_shapes"] = p.outputShapes;
      d["ms"] = ms;
      d["calls"] = p.calls;
      d["flops"] = p.flops ? py::object(py::float_(*p.flops)) : py::none();
      d["gflops"] = p.flops && ms > 0 ? py::object(py::float_(*p.flops / (ms * 1e6))) : py::none();
      l.append(d);
    }
    return l;
  }

  void clearProfile() {
    if (!profiling_)
      raise("clear_profile() needs a model loaded with kc.load(..., profile=True)");
    compiled_->clearProfile();
  }

  std::vector<Spec> specs(llvm::ArrayRef<rt::TensorSpec> specs) const {
    std::vector<Spec> r;
    for (const rt::TensorSpec &s : specs)
      r.push_back({s.name, std::vector<int64_t>(s.shape.begin(), s.shape.end()), s.dtype});
    return r;
  }
  std::vector<Spec> inputs() const { return specs(compiled_->inputSpecs()); }
  std::vector<Spec> outputs() const { return specs(compiled_->outputSpecs()); }
  std::string ir() const { return printModule(*module_); }
  const std::string &pipeline() const { return pipeline_; }
  std::string summary() const {
    std::string text;
    llvm::raw_string_ostream os(text);
    printSummary(summarizeModule(*module_), os);
    return os.str();
  }
  size_t arenaBytes() const { return compiled_->arenaBytes(); }
  size_t numSteps() const { return compiled_->numSteps(); }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  ModulePtr module_;
  std::unique_ptr<rt::CompiledModel> compiled_;
  std::string pipeline_;
  bool profiling_;
};

/// Reads, optimizes and compiles a model, with the GIL released; the
/// error, if any, is raised once it is held again.
std::unique_ptr<Model> load(const std::string &path, bool optimize, int threads,
                            const std::string &passes, bool profile, bool checkNan,
                            size_t maxMemoryMiB, const std::string &weights) {
  std::unique_ptr<Model> model;
  llvm::Error error = [&]() -> llvm::Error {
    py::gil_scoped_release release;
    PassManager pm;
    pm.instrumentation().verifyEach = false;
    if (optimize)
      if (llvm::Error e = pm.addPipeline(defaultPipeline()))
        return e;
    if (!passes.empty())
      if (llvm::Error e = pm.addPipeline(passes))
        return e;
    auto module = loadModule(path, weights);
    if (!module)
      return module.takeError();
    if (llvm::Error e = inferTypes(**module))
      return e;
    if (llvm::Error e = verifyModule(**module))
      return e;
    if (llvm::Error e = pm.run(**module))
      return e;
    std::string pipeline;
    for (const auto &p : pm.passes())
      pipeline += (pipeline.empty() ? "" : ",") + p->pipelineText();
    rt::CompileOptions opts;
    opts.numThreads = threads;
    opts.profile = profile;
    opts.checkNan = checkNan;
    opts.maxMemoryBytes = maxMemoryMiB << 20;
    auto compiled = rt::CompiledModel::compile(**module, opts);
    if (!compiled)
      return compiled.takeError();
    model = std::make_unique<Model>(path, std::move(*module), std::move(*compiled),
                                    std::move(pipeline), profile);
    return llvm::Error::success();
  }();
  if (error)
    raise(path, std::move(error));
  return model;
}

} // namespace

PYBIND11_MODULE(_kc, m) {
  m.doc() = "kc: a graph compiler and interpreter for PNNX models";
  m.attr("__version__") = kc::version();
  kcError = PyErr_NewException("kc.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(kcError);

  py::class_<Spec>(m, "TensorSpec", "Name, shape and dtype of a model input or output.")
      .def_readonly("name", &Spec::name)
      .def_property_readonly("shape", [](const Spec &s) { return py::tuple(py::cast(s.shape)); })
      .def_property_readonly("dtype", [](const Spec &s) { return numpyType(s.dtype); })
      .def("__repr__", [](const Spec &s) {
        return "TensorSpec(name='" + s.name +
               "', shape=" + std::string(py::str(py::tuple(py::cast(s.shape)))) +
               ", dtype=" + dtypeName(s.dtype).str() + ")";
      });

  py::class_<Model>(m, "Model", "A compiled model; call it on NumPy arrays.")
      .def("__call__", &Model::call,
           "Runs on one array per input; returns the output array, or a tuple of them.")
      .def("run", &Model::runList, py::arg("inputs"),
           "Runs on a sequence of arrays; returns the list of output arrays.")
      .def("bench", &Model::bench, py::arg("runs") = 50, py::arg("warmup") = 3,
           py::arg("inputs") = py::none(),
           "Times runs (on the given inputs, or random ones); a dict of milliseconds.")
      .def("profile", &Model::profile,
           "Per step: op, name, shapes, ms per call, calls, FLOPs and GFLOP/s "
           "(load with profile=True).")
      .def("clear_profile", &Model::clearProfile,
           "Forgets the times so far (e.g. of the first run, which packs weights).")
      .def("summary", &Model::summary,
           "Op counts, parameters, FLOPs and intermediate memory, as kc-opt --summary.")
      .def_property_readonly("inputs", &Model::inputs)
      .def_property_readonly("outputs", &Model::outputs)
      .def_property_readonly("ir", &Model::ir, "The model's kc IR text, after its passes.")
      .def_property_readonly("pipeline", &Model::pipeline,
                             "The passes that ran, as pipeline text with their options.")
      .def_property_readonly("arena_bytes", &Model::arenaBytes)
      .def_property_readonly("num_steps", &Model::numSteps)
      .def_property_readonly("path", &Model::path)
      .def("__repr__", [](const Model &model) {
        return "<kc.Model '" + model.path() + "': " + std::to_string(model.numSteps()) + " steps>";
      });

  m.def("load", &load, py::arg("path"), py::arg("optimize") = true, py::arg("threads") = 0,
        py::arg("passes") = "", py::arg("profile") = false, py::arg("check_nan") = false,
        py::arg("max_memory_mib") = 0, py::arg("weights") = "",
        "Reads a .pnnx.param (weights from the .pnnx.bin beside it) or kc text, runs the "
        "default pipeline (optimize) and any other passes, and compiles it.");
  m.def("default_pipeline", [] { return defaultPipeline().str(); });
  m.def(
      "passes",
      [] {
        std::vector<std::pair<std::string, std::string>> r;
        for (const PassRegistry::Entry *e : PassRegistry::global().all())
          r.emplace_back(e->name, e->description);
        return r;
      },
      "The registered passes: (name, description) pairs.");
  m.def(
      "load_pass_plugin",
      [](const std::string &path) {
        if (llvm::Error e = loadPassPlugin(path))
          raise(path, std::move(e));
      },
      py::arg("path"), "Loads passes from a shared library into the registry.");
}
