//===- Interpreter.cpp - Executes a module --------------------------------===//
#include "kc/Runtime/Interpreter.h"
#include "kc/IR/Functor.h"
#include "kc/IR/OpCost.h"
#include "kc/IR/Specialize.h"
#include "kc/Runtime/Schedule.h"
#include "kc/Runtime/WeightCache.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <atomic>
#include <cblas.h>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <omp.h>
#include <optional>
#include <set>
#include <unistd.h>

extern "C" void openblas_set_num_threads(int);

namespace kc::rt {

thread_local WeightCache *WeightCache::building_ = nullptr;

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

/// main's body in dataflow order, every operand before its readers, each
/// node once; expanded iteratively (ExpandDataflow), so deep graphs cost
/// no stack.
std::vector<Expr> dataflowOrder(const Function &main) {
  std::vector<Expr> order;
  llvm::DenseSet<const ExprNode *> seen;
  ExpandDataflow(
      main->body(), [&](const Expr &e) { return seen.count(e.get()) != 0; },
      [&](const Expr &e) {
        if (seen.insert(e.get()).second)
          order.push_back(e);
      });
  return order;
}

/// Free space of the activation arena: best fit among the gaps left by
/// freed buffers (coalesced with their neighbours), else the top. Every
/// operation is O(log n) in the number of gaps, so planning stays linear
/// in the model's size even with 100,000 buffers alive at once.
class ArenaSpace {
public:
  size_t allocate(size_t size) {
    auto fit = bySize_.lower_bound({size, 0});
    if (fit != bySize_.end()) {
      auto [gap, offset] = *fit;
      erase(offset, gap);
      if (gap > size)
        insert(offset + size, gap - size);
      return offset;
    }
    size_t offset = top_;
    // A gap just below the top grows into the top instead of being skipped.
    if (!byOffset_.empty()) {
      auto last = std::prev(byOffset_.end());
      if (last->first + last->second == top_) {
        offset = last->first;
        erase(last->first, last->second);
      }
    }
    top_ = offset + size;
    high_ = std::max(high_, top_);
    return offset;
  }

  void release(size_t offset, size_t size) {
    auto next = byOffset_.lower_bound(offset);
    if (next != byOffset_.end() && offset + size == next->first) {
      size += next->second;
      erase(next->first, next->second);
    }
    auto prev = byOffset_.lower_bound(offset);
    if (prev != byOffset_.begin()) {
      --prev;
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        erase(prev->first, prev->second);
      }
    }
    if (offset + size == top_)
      top_ = offset; // the top comes down; high_ keeps the arena's size
    else
      insert(offset, size);
  }

  size_t highWater() const { return high_; }

private:
  void insert(size_t offset, size_t size) {
    byOffset_[offset] = size;
    bySize_.insert({size, offset});
  }
  void erase(size_t offset, size_t size) {
    byOffset_.erase(offset);
    bySize_.erase({size, offset});
  }

  std::map<size_t, size_t> byOffset_;          ///< gap offset -> size
  std::set<std::pair<size_t, size_t>> bySize_; ///< (size, offset)
  size_t top_ = 0, high_ = 0;
};

} // namespace

/// main compiled at one input-shape signature: the schedule and its memory
/// plan, shared by every run at those shapes, and the pool of run states.
struct Plan {
  ModulePtr module; ///< the module the schedule was built from
  std::shared_ptr<WeightCache> weights; ///< the model's, shared with its other plans
  Schedule schedule;
  // The memory plan: each arena value's offset, the arena's and the
  // workspace's sizes.
  std::vector<size_t> offsets;
  size_t arenaBytes = 0, unplanned = 0, workspaceBytes = 0;
  CompileOptions opts;
  int threads = 1; ///< the most threads kernels' scratch is sized for

  /// What a run writes: the arena, the kernels' workspace, one tensor per
  /// value (rebound each run), the time of each step. Each concurrent run
  /// has its own, taken from a pool: runs in turn reuse one, so the steady
  /// state allocates nothing.
  struct RunState {
    std::shared_ptr<void> arena, workspace;
    std::vector<Tensor> bound;
    std::vector<double> stepMs;
    int64_t runs = 0;
  };
  mutable std::mutex poolMutex;
  std::vector<std::unique_ptr<RunState>> states; ///< every state made, for profiles
  std::vector<RunState *> idle;                  ///< those no run holds

  static llvm::Expected<std::shared_ptr<Plan>>
  build(ModulePtr m, const CompileOptions &opts, int threads, std::shared_ptr<WeightCache> weights);
  llvm::Error plan();
  llvm::Error checkMemory(llvm::ArrayRef<int> defStep) const;
  llvm::Expected<RunState *> acquire();
  void release(RunState *s);
  llvm::Expected<std::vector<Tensor>> runOn(RunState &R, llvm::ArrayRef<Tensor> inputs);
  llvm::Expected<std::unique_ptr<RunState>> allocate() const;
  std::vector<OpProfile> profile() const;
};

llvm::Expected<std::shared_ptr<Plan>> Plan::build(ModulePtr m, const CompileOptions &opts,
                                                  int threads,
                                                  std::shared_ptr<WeightCache> weights) {
  auto p = std::make_shared<Plan>();
  p->module = std::move(m);
  p->weights = std::move(weights);
  p->opts = opts;
  p->threads = threads;
  Function main = p->module->main();
  if (!main)
    return error("the module has no @main");
  ScheduleOptions so;
  so.numThreads = threads;
  so.fuse = opts.fuseActivations;
  so.countFlops = opts.profile;
  // Kernels made now share what they prepare from weights with the
  // model's other plans.
  WeightCache::Building sharing(p->weights.get());
  auto schedule = buildSchedule(main, dataflowOrder(main), so);
  if (!schedule)
    return schedule.takeError();
  p->schedule = std::move(*schedule);
  if (auto e = p->plan())
    return std::move(e);
  return p;
}

/// The compiled model: the plan at the shapes the model declares, and one
/// more per input-shape signature it has run at, made on first use.
struct CompiledModel::Impl {
  CompileOptions opts;
  int threads = 1;
  ModulePtr source;                                 ///< what new plans specialize
  std::shared_ptr<WeightCache> weights = std::make_shared<WeightCache>();
  std::vector<TensorSpec> inputSpecs, outputSpecs; ///< as declared (-1: any size)
  std::shared_ptr<Plan> primary;                    ///< at the declared shapes, if static
  std::mutex plansMutex;
  /// Plans at other shapes, the most recently used last.
  std::vector<std::pair<std::vector<Shape>, std::shared_ptr<Plan>>> plans;
  std::atomic<Plan *> lastRun{nullptr};

  llvm::Expected<std::shared_ptr<Plan>> planFor(llvm::ArrayRef<Tensor> inputs);
  /// The plan the statistics speak of: the one last run, else the primary.
  const Plan *shown() const {
    Plan *p = lastRun.load();
    return p ? p : primary.get();
  }
};

/// How many plans at other shapes a model keeps: a caller cycling through
/// more shapes compiles again rather than holding every plan's memory.
constexpr size_t kMaxPlans = 8;

/// Places each arena value at its definition (best fit, see ArenaSpace),
/// freeing buffers after their last reader; values aliased by views live
/// as long as their views.
llvm::Error Plan::plan() {
  const auto &values = schedule.values;
  const auto &steps = schedule.steps;
  std::vector<int> defStep(values.size(), -1), lastUse(values.size(), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (unsigned o : steps[s].outputs)
      defStep[schedule.root(o)] = int(s);
    for (unsigned i : steps[s].inputs) {
      int &r = lastUse[schedule.root(i)];
      r = std::max(r, int(s));
    }
    workspaceBytes = std::max(workspaceBytes, steps[s].kernel->workspaceBytes());
  }
  for (unsigned o : schedule.outputs)
    lastUse[schedule.root(o)] = int(steps.size()); // read after the last step

  // Values defined at each step, and values whose last reader is each step.
  std::vector<std::vector<unsigned>> defsAt(steps.size()), freedAfter(steps.size() + 1);
  offsets.assign(values.size(), 0);
  for (size_t v = 0; v < values.size(); ++v)
    if (values[v].kind == ScheduleValue::Arena && defStep[v] >= 0) {
      defsAt[size_t(defStep[v])].push_back(unsigned(v));
      freedAfter[size_t(std::max(lastUse[v], defStep[v]))].push_back(unsigned(v));
    }
  auto sizeOf = [&](unsigned v) { return (values[v].bytes + 63) / 64 * 64; };
  ArenaSpace space;
  for (size_t s = 0; s < steps.size(); ++s) {
    for (unsigned v : defsAt[s]) {
      unplanned += sizeOf(v);
      offsets[v] = space.allocate(sizeOf(v));
    }
    for (unsigned v : freedAfter[s])
      space.release(offsets[v], sizeOf(v));
  }
  arenaBytes = space.highWater();
  if (auto e = checkMemory(defStep))
    return e;
  // The first run's buffers, so that a model that does not fit fails here.
  auto first = allocate();
  if (!first)
    return first.takeError();
  idle.push_back(first->get());
  states.push_back(std::move(*first));
  return llvm::Error::success();
}

/// An idle run state, or a new one when every state is in use.
llvm::Expected<Plan::RunState *> Plan::acquire() {
  std::lock_guard<std::mutex> lock(poolMutex);
  if (!idle.empty()) {
    RunState *s = idle.back();
    idle.pop_back();
    return s;
  }
  auto fresh = allocate();
  if (!fresh)
    return fresh.takeError();
  states.push_back(std::move(*fresh));
  return states.back().get();
}

void Plan::release(RunState *s) {
  // The caller's input tensors are not kept past the run.
  for (size_t v = 0; v < schedule.values.size(); ++v)
    if (schedule.values[v].kind == ScheduleValue::Input)
      s->bound[v] = Tensor();
  std::lock_guard<std::mutex> lock(poolMutex);
  idle.push_back(s);
}

/// A run's buffers, and its tensors bound to them.
llvm::Expected<std::unique_ptr<Plan::RunState>> Plan::allocate() const {
  const auto &values = schedule.values;
  auto state = std::make_unique<RunState>();
  RunState &r = *state;
  try {
    r.arena = alignedAlloc(arenaBytes);
    r.workspace = alignedAlloc(workspaceBytes);
  } catch (const std::bad_alloc &) {
    return error("cannot allocate " + llvm::Twine(arenaBytes + workspaceBytes) +
                 " bytes of activation memory");
  }
  r.bound.resize(values.size());
  for (size_t v = 0; v < values.size(); ++v) {
    const ScheduleValue &val = values[v];
    if (val.kind == ScheduleValue::Arena)
      r.bound[v] =
          Tensor::view(val.dtype, val.shape, static_cast<uint8_t *>(r.arena.get()) + offsets[v]);
    else if (val.kind == ScheduleValue::Constant)
      r.bound[v] = val.constant;
  }
  r.stepMs.assign(schedule.steps.size(), 0.0);
  return std::move(state);
}

/// Refuses a plan that needs more than opts.maxMemoryBytes (by default the
/// machine's physical memory), naming the step whose buffer is largest.
llvm::Error Plan::checkMemory(llvm::ArrayRef<int> defStep) const {
  const auto &values = schedule.values;
  const auto &steps = schedule.steps;
  size_t limit = opts.maxMemoryBytes;
  if (limit == 0) {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    limit = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : SIZE_MAX;
  }
  if (arenaBytes <= limit && workspaceBytes <= limit - arenaBytes)
    return llvm::Error::success();
  // The step defining the largest value, or needing the most scratch.
  size_t largest = 0;
  const ScheduleStep *culprit = nullptr;
  for (size_t v = 0; v < values.size(); ++v)
    if (values[v].kind == ScheduleValue::Arena && defStep[v] >= 0 && values[v].bytes > largest)
      largest = values[v].bytes, culprit = &steps[size_t(defStep[v])];
  for (const ScheduleStep &st : steps)
    if (st.kernel->workspaceBytes() > largest)
      largest = st.kernel->workspaceBytes(), culprit = &st;
  auto mib = [](size_t b) { return std::to_string(b >> 20) + " MiB"; };
  std::string where;
  if (culprit) {
    where = "; the largest buffer, " + mib(largest) + ", is " + culprit->op;
    if (!culprit->name.empty())
      where += " " + quoteInput(culprit->name);
    if (culprit->loc.valid())
      where += " (line " + std::to_string(culprit->loc.line) + ")";
  }
  return error("the model needs " + mib(arenaBytes + workspaceBytes) +
               " of activation memory, more than the limit of " + mib(limit) + where +
               "; kc-run --max-memory=MiB sets the limit");
}

CompiledModel::CompiledModel() : impl_(std::make_unique<Impl>()) {}
CompiledModel::~CompiledModel() = default;

/// Specs of a function's parameters or results as declared (-1 for `?`).
static std::vector<TensorSpec> specsOf(llvm::ArrayRef<Type> types,
                                       llvm::ArrayRef<std::string> names) {
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < types.size(); ++i) {
    TensorSpec s;
    s.name = i < names.size() ? names[i] : std::to_string(i);
    if (auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(types[i].get())) {
      s.dtype = t->dtype();
      s.shape.assign(t->dims().begin(), t->dims().end());
    }
    specs.push_back(std::move(s));
  }
  return specs;
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
  I.source = m.clone();
  if (staticInputs(*main)) {
    auto p = Plan::build(I.source, opts, I.threads, I.weights);
    if (!p)
      return p.takeError();
    I.primary = std::move(*p);
    I.inputSpecs = I.primary->schedule.inputSpecs;
    I.outputSpecs = I.primary->schedule.outputSpecs;
    return cm;
  }
  // `?` dims: plans are made per input shape, at the first run.
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
    shapes += (shapes.empty() ? "" : ", ") + dtypeName(t.dtype()).str() + shapeToString(t.shape());
  }
  auto fail = [&](llvm::Error e) {
    return error("at input shape " + shapes + ": " + llvm::toString(std::move(e)));
  };
  auto m = specializeInputs(*source, types);
  if (!m)
    return fail(m.takeError());
  auto p = Plan::build(std::move(*m), opts, threads, weights);
  if (!p)
    return fail(p.takeError());
  if (plans.size() == kMaxPlans)
    plans.erase(plans.begin());
  plans.emplace_back(std::move(key), *p);
  return std::move(*p);
}

static bool hasNan(const Tensor &t) {
  if (t.dtype() != DType::F32)
    return false;
  const float *p = t.data<float>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (std::isnan(p[i]))
      return true;
  return false;
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
                   dtypeName(s.dtype) + shapeToString(s.shape) + "), got " +
                   dtypeName(inputs[i].dtype()) + shapeToString(inputs[i].shape()));
  }
  auto plan = I.planFor(inputs);
  if (!plan)
    return plan.takeError();
  Plan &P = **plan;
  // Kernels' per-thread scratch holds P.threads threads at most.
  ThreadCountScope threads(std::min(opts.numThreads > 0 ? opts.numThreads : P.threads, P.threads));
  auto state = P.acquire();
  if (!state)
    return state.takeError();
  auto result = P.runOn(**state, inputs);
  P.release(*state);
  I.lastRun.store(&P);
  return result;
}

llvm::Expected<std::vector<Tensor>> Plan::runOn(RunState &R, llvm::ArrayRef<Tensor> inputs) {
  const Schedule &S = schedule;
  for (size_t v = 0; v < S.values.size(); ++v)
    if (S.values[v].kind == ScheduleValue::Input)
      R.bound[v] = inputs[S.values[v].input];
  // Aliases take their root's bytes with their own shape.
  for (size_t v = 0; v < S.values.size(); ++v)
    if (S.values[v].kind == ScheduleValue::Alias) {
      const Tensor &r = R.bound[S.root(unsigned(v))];
      R.bound[v] = Tensor::view(S.values[v].dtype, S.values[v].shape, r.raw());
    }
  ExecContext ctx;
  ctx.workspace = R.workspace.get();
  ctx.workspaceBytes = workspaceBytes;
  llvm::SmallVector<const Tensor *, 8> in;
  llvm::SmallVector<Tensor *, 4> out;
  for (size_t s = 0; s < S.steps.size(); ++s) {
    const ScheduleStep &st = S.steps[s];
    in.clear();
    out.clear();
    for (unsigned v : st.inputs)
      in.push_back(&R.bound[v]);
    for (unsigned v : st.outputs)
      out.push_back(&R.bound[v]);
    if (opts.profile) {
      auto t0 = std::chrono::steady_clock::now();
      st.kernel->run(in, out, ctx);
      R.stepMs[s] +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    } else {
      st.kernel->run(in, out, ctx);
    }
    if (!ctx.error.empty())
      return error(st.op + (st.name.empty() ? "" : " '" + st.name + "'") +
                   (st.loc.valid() ? " (line " + llvm::Twine(st.loc.line) + ")" : "") + ": " +
                   ctx.error);
    if (opts.checkNan)
      for (size_t o = 0; o < out.size(); ++o)
        if (hasNan(*out[o]))
          return error("NaN in output " + llvm::Twine(o) + " of " + st.op +
                       (st.name.empty() ? "" : " " + quoteInput(st.name)) +
                       (st.loc.valid() ? " (line " + llvm::Twine(st.loc.line) + ")" : ""));
  }
  ++R.runs;
  std::vector<Tensor> result;
  for (unsigned v : S.outputs) {
    const Tensor &src = R.bound[v];
    Tensor t = Tensor::empty(src.dtype(), src.shape());
    std::memcpy(t.raw(), src.raw(), t.nbytes());
    if (opts.checkNan && hasNan(t))
      return error("NaN in model output " + llvm::Twine(result.size()));
    result.push_back(std::move(t));
  }
  return result;
}

llvm::ArrayRef<TensorSpec> CompiledModel::inputSpecs() const { return impl_->inputSpecs; }
llvm::ArrayRef<TensorSpec> CompiledModel::outputSpecs() const { return impl_->outputSpecs; }
size_t CompiledModel::arenaBytes() const {
  const Plan *p = impl_->shown();
  return p ? p->arenaBytes : 0;
}
size_t CompiledModel::unplannedBytes() const {
  const Plan *p = impl_->shown();
  return p ? p->unplanned : 0;
}
size_t CompiledModel::workspaceBytes() const {
  const Plan *p = impl_->shown();
  return p ? p->workspaceBytes : 0;
}
size_t CompiledModel::numSteps() const {
  const Plan *p = impl_->shown();
  return p ? p->schedule.steps.size() : 0;
}
size_t CompiledModel::preparedWeights() const { return impl_->weights->size(); }
size_t CompiledModel::numPlans() const {
  std::lock_guard<std::mutex> lock(impl_->plansMutex);
  return (impl_->primary ? 1 : 0) + impl_->plans.size();
}

std::vector<OpProfile> CompiledModel::profile() const {
  const Plan *p = impl_->shown();
  return p ? p->profile() : std::vector<OpProfile>();
}

std::vector<OpProfile> Plan::profile() const {
  const Schedule &S = schedule;
  auto shapes = [&](llvm::ArrayRef<unsigned> values) {
    std::string s;
    for (unsigned v : values)
      s += (s.empty() ? "" : ",") +
           (dtypeName(S.values[v].dtype).str() + shapeToString(S.values[v].shape));
    return s;
  };
  std::map<std::pair<std::string, std::string>, OpProfile> byOp;
  for (size_t s = 0; s < S.steps.size(); ++s) {
    const ScheduleStep &st = S.steps[s];
    auto [it, first] = byOp.try_emplace({st.op, st.name});
    OpProfile &p = it->second;
    if (first) {
      p.op = st.op;
      p.name = st.name;
      p.inputShapes = shapes(st.inputs);
      p.outputShapes = shapes(st.outputs);
      p.flops = st.flops;
    } else {
      p.flops = plusFlops(p.flops, st.flops);
    }
    std::lock_guard<std::mutex> lock(poolMutex);
    p.calls = 0;
    for (const auto &state : states) {
      p.totalMs += state->stepMs[s];
      p.calls += state->runs;
    }
  }
  std::vector<OpProfile> r;
  for (auto &[k, p] : byOp)
    r.push_back(p);
  std::sort(r.begin(), r.end(),
            [](const OpProfile &a, const OpProfile &b) { return a.totalMs > b.totalMs; });
  return r;
}

} // namespace kc::rt
