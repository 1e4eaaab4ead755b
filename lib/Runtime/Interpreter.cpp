//===- Interpreter.cpp - Executes a module --------------------------------===//
#include "kc/Runtime/Interpreter.h"
#include "Plan.h"
#include "kc/IR/AttrOperands.h"
#include "kc/IR/Specialize.h"
#include "kc/IR/WidenHalf.h"
#include "kc/Support/Half.h"

#include <algorithm>
#include <mutex>
#include <omp.h>

extern "C" void openblas_set_num_threads(int);

namespace kc::rt {

void setNumThreads(int n) {
  // All parallelism goes through OpenMP (see sgemm in kernels/Blas.h):
  // OpenBLAS itself runs single-threaded, inside kc's threads. Its OpenMP
  // build sets OpenMP's thread count to 1 as a side effect, so the default
  // (all cores, or OMP_NUM_THREADS) is read before the first such call and
  // put back whenever no count is given.
  static const int defaultThreads = omp_get_max_threads();
  openblas_set_num_threads(1);
  omp_set_num_threads(n > 0 ? n : defaultThreads);
}

namespace {

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

/// The compiled model: the plan at the shapes the model declares, and one
/// more per input-shape signature it has run at, made on first use.
struct CompiledModel::Impl {
  CompileOptions opts;
  int threads = 1;
  ModulePtr source;                                 ///< what new plans specialize
  ModulePtr halfSource; ///< an f16 model as given (source computes it in f32)
  std::shared_ptr<WeightCache> weights = std::make_shared<WeightCache>();
  std::shared_ptr<BufferPool> buffers = std::make_shared<BufferPool>(); ///< activation memory
  std::vector<TensorSpec> inputSpecs, outputSpecs; ///< as declared (-1: any size)
  std::shared_ptr<Plan> primary;                    ///< at the declared shapes, if static
  std::mutex plansMutex;
  /// Plans at other shapes, the most recently used last.
  std::vector<std::pair<std::vector<Shape>, std::shared_ptr<Plan>>> plans;
  std::shared_ptr<Plan> lastRun; ///< under plansMutex; kept alive past eviction

  llvm::Expected<std::shared_ptr<Plan>> planFor(llvm::ArrayRef<Tensor> inputs);
  /// The plan the statistics speak of: the one last run, else the primary.
  std::shared_ptr<const Plan> shown() {
    std::lock_guard<std::mutex> lock(plansMutex);
    return lastRun ? lastRun : primary;
  }
};

/// How many plans at other shapes a model keeps: a caller cycling through
/// more shapes compiles again rather than holding every plan's memory.
constexpr size_t kMaxPlans = 8;

CompiledModel::CompiledModel() : impl_(std::make_unique<Impl>()) {}
CompiledModel::~CompiledModel() = default;

/// Specs of a function's parameters or results as declared (-1 for `?`).
static std::vector<TensorSpec> specsOf(llvm::ArrayRef<Type> types,
                                       llvm::ArrayRef<std::string> names) {
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < types.size(); ++i) {
    TensorSpec s;
    s.name = i < names.size() ? names[i] : "out" + std::to_string(i); // as Schedule names them
    if (auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(types[i].get())) {
      s.dtype = t->dtype();
      s.shape.assign(t->dims().begin(), t->dims().end());
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

/// `t` (f16 or f32) converted to `to` (f32 or f16).
static Tensor convertHalf(const Tensor &t, DType to) {
  Tensor r = Tensor::empty(to, t.shape());
  size_t n = size_t(t.numel());
  if (to == DType::F32)
    halfToFloat(t.data<uint16_t>(), r.data<float>(), n);
  else
    floatToHalf(t.data<float>(), r.data<uint16_t>(), n);
  return r;
}

/// True if every parameter of `main` has a tensor type of known dims.
static bool staticInputs(const FunctionNode &main) {
  for (const Var &p : main.params()) {
    auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(p->type().get());
    if (!t || llvm::any_of(t->dims(), [](int64_t d) { return d < 0; }))
      return false;
  }
  return true;
}

llvm::Expected<std::unique_ptr<CompiledModel>> CompiledModel::compile(const Module &m,
                                                                      const CompileOptions &opts) {
  setNumThreads(opts.numThreads);
  std::unique_ptr<CompiledModel> cm(new CompiledModel());
  Impl &I = *cm->impl_;
  I.opts = opts;
  I.threads = omp_get_max_threads();
  Function main = m.main();
  if (!main)
    return error("the module has no @main");
  // The inputs and outputs as the model declares them.
  std::vector<Type> in, out;
  std::vector<std::string> names;
  for (const Var &p : main->params()) {
    in.push_back(p->type());
    names.push_back(p->name());
  }
  const Type &ret = main->retType() ? main->retType() : main->body()->type();
  if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(ret.get()))
    out.assign(tt->fields().begin(), tt->fields().end());
  else
    out.push_back(ret);
  I.inputSpecs = specsOf(in, names);
  I.outputSpecs = specsOf(out, {});
  if (mentionsHalf(m)) {
    // Computed in f32; f16 only at the inputs and outputs (run()).
    auto wide = widenHalf(m);
    if (!wide)
      return wide.takeError();
    I.source = std::move(*wide);
    I.halfSource = m.clone();
  } else {
    I.source = m.clone();
  }
  if (!staticInputs(*main))
    return cm; // `?` dims: plans are made per input shape, at the first run
  // Attributes given as operands are bound in a copy: the source keeps
  // them for plans at other shapes.
  ModulePtr planned = I.source;
  if (hasAttrOperands(*I.source)) {
    std::vector<Type> declared;
    for (const Var &p : I.source->main()->params())
      declared.push_back(p->type());
    auto m = specializeInputs(*I.source, declared);
    if (!m)
      return m.takeError();
    planned = std::move(*m);
  }
  auto p = Plan::build(planned, opts, I.threads, I.weights, I.buffers);
  if (!p)
    return p.takeError();
  I.primary = std::move(*p);
  for (const TensorSpec &s : I.outputSpecs)
    I.primary->halfOutputs.push_back(s.dtype == DType::F16);
  // The plan's specs, but f16 where the model takes or gives f16.
  auto keepHalf = [](std::vector<TensorSpec> &planned, llvm::ArrayRef<TensorSpec> declared) {
    for (size_t i = 0; i < planned.size() && i < declared.size(); ++i)
      if (declared[i].dtype == DType::F16)
        planned[i].dtype = DType::F16;
    return planned;
  };
  I.inputSpecs = keepHalf(I.primary->schedule.inputSpecs, I.inputSpecs);
  I.outputSpecs = keepHalf(I.primary->schedule.outputSpecs, I.outputSpecs);
  return cm;
}

/// The plan for inputs of these shapes: the primary one, a cached one, or
/// one made now from the module with its input types set to them.
llvm::Expected<std::shared_ptr<Plan>> CompiledModel::Impl::planFor(llvm::ArrayRef<Tensor> inputs) {
  if (primary) {
    bool same = true;
    for (size_t i = 0; i < inputs.size() && same; ++i)
      same = llvm::ArrayRef<int64_t>(inputSpecs[i].shape) == inputs[i].shape();
    if (same)
      return primary;
  }
  std::vector<Shape> key;
  for (const Tensor &t : inputs)
    key.emplace_back(t.shape().begin(), t.shape().end());
  std::lock_guard<std::mutex> lock(plansMutex);
  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i].first == key) {
      std::rotate(plans.begin() + i, plans.begin() + i + 1, plans.end());
      return plans.back().second;
    }
  std::vector<Type> types;
  std::string shapes;
  for (const Tensor &t : inputs) {
    types.push_back(tensorType(t.dtype(), t.shape()));
    shapes += (shapes.empty() ? "" : ", ") + typeToString(types.back());
  }
  auto fail = [&](llvm::Error e) {
    return error("at input shape " + shapes + ": " + llvm::toString(std::move(e)));
  };
  auto m = specializeInputs(*source, types);
  if (!m)
    return fail(m.takeError());
  auto p = Plan::build(std::move(*m), opts, threads, weights, buffers);
  if (!p)
    return fail(p.takeError());
  if (halfSource) {
    // Which outputs the model gives in f16 at these shapes: its own types
    // inferred from them (`?` dims may have hidden them until now).
    std::vector<Type> given;
    for (size_t i = 0; i < inputs.size(); ++i)
      given.push_back(tensorType(inputSpecs[i].dtype, inputs[i].shape()));
    auto asGiven = specializeInputs(*halfSource, given);
    if (!asGiven)
      return fail(asGiven.takeError());
    const Type &ret = (*asGiven)->main()->body()->type();
    auto *tu = llvm::dyn_cast_or_null<TupleTypeNode>(ret.get());
    for (size_t i = 0; i < outputSpecs.size(); ++i) {
      const Type &t = tu ? (i < tu->size() ? tu->fields()[i] : Type()) : ret;
      auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
      (*p)->halfOutputs.push_back(tt && tt->dtype() == DType::F16);
    }
  }
  if (plans.size() == kMaxPlans)
    plans.erase(plans.begin());
  plans.emplace_back(std::move(key), *p);
  return std::move(*p);
}

namespace {
/// Sets the calling thread's OpenMP thread count for the extent of a run
/// and puts the caller's back after it, so that a run neither depends on
/// nor leaks into the threads of the code that calls it.
class ThreadCountScope {
public:
  explicit ThreadCountScope(int n) : saved_(omp_get_max_threads()) {
    if (n > 0 && n != saved_)
      omp_set_num_threads(n);
  }
  ~ThreadCountScope() {
    if (omp_get_max_threads() != saved_)
      omp_set_num_threads(saved_);
  }

private:
  int saved_;
};
} // namespace

llvm::Expected<std::vector<Tensor>> CompiledModel::run(llvm::ArrayRef<Tensor> inputs,
                                                       const RunOptions &opts) {
  Impl &I = *impl_;
  if (opts.numThreads < 0)
    return error("the thread count of a run cannot be negative, got " +
                 llvm::Twine(opts.numThreads));
  if (inputs.size() != I.inputSpecs.size())
    return error("the model takes " + llvm::Twine(I.inputSpecs.size()) + " input(s), got " +
                 llvm::Twine(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &s = I.inputSpecs[i];
    if (inputs[i].dtype() != s.dtype || inputs[i].shape().size() != s.shape.size())
      return error("input " + llvm::Twine(i) + " (%" + s.name + ") must be " + dtypeName(s.dtype) +
                   " of rank " + llvm::Twine(s.shape.size()) + " (the model declares " +
                   typeToString(tensorType(s.dtype, s.shape)) + "), got " +
                   dtypeName(inputs[i].dtype()) + shapeToString(inputs[i].shape()));
  }
  // f16 inputs are computed as f32 (kc/IR/WidenHalf.h).
  std::vector<Tensor> widened;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype() == DType::F16) {
      if (widened.empty())
        widened.assign(inputs.begin(), inputs.end());
      widened[i] = convertHalf(inputs[i], DType::F32);
    }
  llvm::ArrayRef<Tensor> computed = widened.empty() ? inputs : llvm::ArrayRef<Tensor>(widened);
  auto plan = I.planFor(computed);
  if (!plan)
    return plan.takeError();
  Plan &P = **plan;
  // Kernels' per-thread scratch holds P.threads threads at most.
  ThreadCountScope threads(std::min(opts.numThreads > 0 ? opts.numThreads : P.threads, P.threads));
  auto state = P.acquire();
  if (!state)
    return state.takeError();
  auto result = P.runOn(**state, computed);
  P.release(*state);
  {
    std::lock_guard<std::mutex> lock(I.plansMutex);
    I.lastRun = *plan;
  }
  if (result)
    for (size_t i = 0; i < result->size() && i < P.halfOutputs.size(); ++i)
      if (P.halfOutputs[i] && (*result)[i].dtype() == DType::F32)
        (*result)[i] = convertHalf((*result)[i], DType::F16);
  return result;
}
llvm::ArrayRef<TensorSpec> CompiledModel::inputSpecs() const { return impl_->inputSpecs; }
llvm::ArrayRef<TensorSpec> CompiledModel::outputSpecs() const { return impl_->outputSpecs; }
size_t CompiledModel::arenaBytes() const {
  auto p = impl_->shown();
  return p ? p->arenaBytes : 0;
}
size_t CompiledModel::unplannedBytes() const {
  auto p = impl_->shown();
  return p ? p->unplanned : 0;
}
size_t CompiledModel::workspaceBytes() const {
  auto p = impl_->shown();
  return p ? p->workspaceBytes : 0;
}
size_t CompiledModel::numSteps() const {
  auto p = impl_->shown();
  return p ? p->schedule.steps.size() : 0;
}
size_t CompiledModel::preparedWeights() const { return impl_->weights->size(); }
size_t CompiledModel::numPlans() const {
  std::lock_guard<std::mutex> lock(impl_->plansMutex);
  return (impl_->primary ? 1 : 0) + impl_->plans.size();
}

std::vector<OpProfile> CompiledModel::profile() const {
  auto p = impl_->shown();
  return p ? p->profile() : std::vector<OpProfile>();
}

void CompiledModel::clearProfile() {
  std::lock_guard<std::mutex> lock(impl_->plansMutex);
  if (impl_->primary)
    impl_->primary->clearProfile();
  for (auto &entry : impl_->plans)
    entry.second->clearProfile();
  if (impl_->lastRun)
    impl_->lastRun->clearProfile();
}

} // namespace kc::rt
