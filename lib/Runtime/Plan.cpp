//===- Plan.cpp - Schedule, memory plan and runs at one input shape -------===//
#include "Plan.h"
#include "kc/IR/Functor.h"
#include "kc/IR/OpCost.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <new>
#include <set>
#include <utility>
#include <unistd.h>

namespace kc::rt {

thread_local WeightCache *WeightCache::building_ = nullptr;

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

llvm::Expected<std::shared_ptr<Plan>> Plan::build(ModulePtr m, const CompileOptions &opts,
                                                  int threads,
                                                  std::shared_ptr<WeightCache> weights,
                                                  std::shared_ptr<BufferPool> buffers) {
  auto p = std::make_shared<Plan>();
  p->module = std::move(m);
  p->weights = std::move(weights);
  p->buffers = std::move(buffers);
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
  auto schedule = buildSchedule(*p->module, dataflowOrder(main), so);
  if (!schedule)
    return schedule.takeError();
  p->schedule = std::move(*schedule);
  if (auto e = p->plan())
    return std::move(e);
  return p;
}

/// Places each arena value at its definition (best fit, see ArenaSpace),
/// freeing buffers after their last reader; values aliased by views live
/// as long as their views.
llvm::Error Plan::plan() {
  const auto &values = schedule.values;
  const auto &steps = schedule.steps;
  std::vector<int> defStep(values.size(), -1), lastUse(values.size(), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    // A root is live from the first step that writes any of it (the
    // pieces of a concatenation written in place: ConcatInPlace.cpp).
    for (unsigned o : steps[s].outputs)
      if (int &d = defStep[schedule.root(o)]; d < 0)
        d = int(s);
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
  writtenInPlace.assign(schedule.outputs.size(), false);
  for (size_t i = 0; i < schedule.outputs.size(); ++i) {
    unsigned v = schedule.outputs[i];
    writtenInPlace[i] = values[v].kind == ScheduleValue::Arena && defStep[v] >= 0 &&
                        std::count(schedule.outputs.begin(), schedule.outputs.end(), v) == 1;
  }
  if (auto e = checkMemory(defStep))
    return e;
  // The first run's state, and its memory, so that a model that does not
  // fit fails here; the memory goes to the pool until a run takes it.
  auto first = std::make_unique<RunState>();
  if (auto e = takeMemory(*first))
    return e;
  buffers->give(std::move(first->memory));
  idle.push_back(first.get());
  states.push_back(std::move(first));
  return llvm::Error::success();
}

/// An idle run state, or a new one when every state is in use, holding
/// activation memory from the model's pool.
llvm::Expected<Plan::RunState *> Plan::acquire() {
  RunState *s = nullptr;
  {
    std::lock_guard<std::mutex> lock(poolMutex);
    if (!idle.empty()) {
      s = idle.back();
      idle.pop_back();
    } else {
      states.push_back(std::make_unique<RunState>());
      s = states.back().get();
    }
  }
  if (auto e = takeMemory(*s)) {
    std::lock_guard<std::mutex> lock(poolMutex);
    idle.push_back(s);
    return std::move(e);
  }
  return s;
}

void Plan::release(RunState *s) {
  // The caller's input tensors are not kept past the run.
  for (size_t v = 0; v < schedule.values.size(); ++v)
    if (schedule.values[v].kind == ScheduleValue::Input)
      s->bound[v] = Tensor();
  buffers->give(std::move(s->memory));
  s->memory = {};
  std::lock_guard<std::mutex> lock(poolMutex);
  idle.push_back(s);
}

/// Memory for `s` from the pool, and its tensors bound to it when it is
/// not the memory they were bound to last.
llvm::Error Plan::takeMemory(RunState &s) const {
  const auto &values = schedule.values;
  try {
    s.memory = buffers->take(workspaceOffset() + workspaceBytes);
  } catch (const std::bad_alloc &) {
    return error("cannot allocate " + llvm::Twine(arenaBytes + workspaceBytes) +
                 " bytes of activation memory");
  }
  if (s.bound.empty()) {
    s.bound.resize(values.size());
    for (size_t v = 0; v < values.size(); ++v)
      if (values[v].kind == ScheduleValue::Constant)
        s.bound[v] = values[v].constant;
    s.stepMs.assign(schedule.steps.size(), 0.0);
  }
  if (s.boundTo != s.memory.memory.get()) {
    auto *arena = static_cast<uint8_t *>(s.memory.memory.get());
    for (size_t v = 0; v < values.size(); ++v)
      if (values[v].kind == ScheduleValue::Arena)
        s.bound[v] = Tensor::view(values[v].dtype, values[v].shape, arena + offsets[v]);
    s.boundTo = arena;
  }
  return llvm::Error::success();
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

static bool hasNan(const Tensor &t) {
  if (t.dtype() != DType::F32)
    return false;
  const float *p = t.data<float>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (std::isnan(p[i]))
      return true;
  return false;
}

llvm::Expected<std::vector<Tensor>> Plan::runOn(RunState &R, llvm::ArrayRef<Tensor> inputs) {
  const Schedule &S = schedule;
  for (size_t v = 0; v < S.values.size(); ++v)
    if (S.values[v].kind == ScheduleValue::Input)
      R.bound[v] = inputs[S.values[v].input];
  // Outputs written where the caller gets them: heap memory malloc hands
  // back run after run (a copy out of the arena cost a pass over them).
  for (size_t i = 0; i < S.outputs.size(); ++i)
    if (writtenInPlace[i]) {
      const ScheduleValue &sv = S.values[S.outputs[i]];
      R.bound[S.outputs[i]] = Tensor::uninitialized(sv.dtype, sv.shape);
    }
  // Aliases take their root's bytes with their own shape.
  for (size_t v = 0; v < S.values.size(); ++v)
    if (S.values[v].kind == ScheduleValue::Alias) {
      const Tensor &r = R.bound[S.root(unsigned(v))];
      R.bound[v] = Tensor::view(S.values[v].dtype, S.values[v].shape,
                                static_cast<uint8_t *>(r.raw()) + S.values[v].aliasOffset);
    }
  ExecContext ctx;
  ctx.workspace = static_cast<uint8_t *>(R.memory.memory.get()) + workspaceOffset();
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
  for (size_t i = 0; i < S.outputs.size(); ++i) {
    unsigned v = S.outputs[i];
    // Handed over; the next run binds a new tensor.
    Tensor t = writtenInPlace[i] ? std::exchange(R.bound[v], Tensor()) : Tensor::copyOf(R.bound[v]);
    if (opts.checkNan && hasNan(t))
      return error("NaN in model output " + llvm::Twine(result.size()));
    result.push_back(std::move(t));
  }
  return result;
}

void Plan::clearProfile() {
  std::lock_guard<std::mutex> lock(poolMutex);
  for (const auto &state : states) {
    std::fill(state->stepMs.begin(), state->stepMs.end(), 0.0);
    state->runs = 0;
  }
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
  auto bytes = [&](llvm::ArrayRef<unsigned> values) {
    double b = 0;
    for (unsigned v : values)
      b += double(numElements(S.values[v].shape)) * double(dtypeSize(S.values[v].dtype));
    return b;
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
    p.bytes += bytes(st.inputs) + bytes(st.outputs);
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
