//===- Interpreter.cpp - Executes a module --------------------------------===//
#include "kc/Runtime/Interpreter.h"
#include "kc/IR/Diagnostic.h"
#include "kc/IR/Functor.h"
#include "kc/Runtime/ExprKernel.h"
#include "kc/Support/Quote.h"

#include "kernels/KernelUtils.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cblas.h>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <new>
#include <omp.h>
#include <optional>
#include <unistd.h>

extern "C" void openblas_set_num_threads(int);

namespace kc::rt {

void setNumThreads(int n) {
  // All parallelism goes through OpenMP (see sgemm in KernelUtils.h):
  // OpenBLAS itself runs single-threaded, inside kc's threads. Its OpenMP
  // build sets OpenMP's thread count to 1 as a side effect, so the default
  // (all cores, or OMP_NUM_THREADS) is read before the first such call and
  // put back whenever no count is given.
  static const int defaultThreads = omp_get_max_threads();
  openblas_set_num_threads(1);
  omp_set_num_threads(n > 0 ? n : defaultThreads);
}

namespace {

/// Where a value's bytes live.
struct Value {
  enum Kind : uint8_t { Input, Constant, Arena, Alias } kind = Arena;
  DType dtype = DType::F32;
  Shape shape;
  size_t bytes = 0;
  unsigned input = 0;    ///< Input: parameter index
  Tensor constant;       ///< Constant: the materialized tensor
  size_t offset = 0;     ///< Arena: byte offset
  unsigned aliasOf = 0;  ///< Alias: the value whose bytes these are (never an alias)
  int defStep = -1, lastUse = -1;
};

struct Step {
  std::unique_ptr<OpKernel> kernel;
  std::vector<unsigned> inputs, outputs;
  std::string op, name;
  SourceLoc loc;
};

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Whether every tensor of `t` is static and holds no element.
bool holdsNoElement(const Type &t) {
  if (auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get()))
    return tt->numElements() == 0;
  if (auto *tu = llvm::dyn_cast_or_null<TupleTypeNode>(t.get()))
    return llvm::all_of(tu->fields(), holdsNoElement);
  return false;
}

/// The kernel of a call whose results hold no element (a zero-size dim):
/// there is nothing to compute, so kernels are never built for, nor run
/// on, empty results, and need not guard their divisions against them.
class EmptyResultKernel final : public OpKernel {
public:
  void run(llvm::ArrayRef<const Tensor *>, llvm::ArrayRef<Tensor *>, ExecContext &) override {}
};

} // namespace

struct CompiledModel::Impl {
  std::vector<Value> values;
  std::vector<Step> steps;
  std::vector<unsigned> outputs;
  std::vector<TensorSpec> inputSpecs, outputSpecs;
  size_t arenaBytes = 0, unplanned = 0, workspaceBytes = 0;
  std::shared_ptr<void> arena, workspace;
  std::vector<Tensor> bound; ///< one tensor per value, rebound each run
  std::vector<double> stepMs;
  int64_t runs = 0;
  CompileOptions opts;

  llvm::Error build(const Module &m);
  llvm::Error plan();
  llvm::Error checkMemory() const;
  unsigned root(unsigned v) const {
    while (values[v].kind == Value::Alias)
      v = values[v].aliasOf;
    return v;
  }
  unsigned newValue(const Type &t, const llvm::Twine &what, llvm::Error &err);
};

unsigned CompiledModel::Impl::newValue(const Type &t, const llvm::Twine &what, llvm::Error &err) {
  Value v;
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
  if (!tt || !tt->isStatic()) {
    if (!err)
      err = error(what + ": the interpreter needs a static tensor type, got " + typeToString(t));
  } else {
    v.dtype = tt->dtype();
    v.shape.assign(tt->dims().begin(), tt->dims().end());
    v.bytes = size_t(numElements(v.shape)) * dtypeSize(v.dtype);
  }
  values.push_back(std::move(v));
  return values.size() - 1;
}

static std::string describe(const CallNode &c) {
  std::string s = describeCall(c);
  if (c.loc().valid())
    s += " (line " + std::to_string(c.loc().line) + ")";
  return s;
}

llvm::Error CompiledModel::Impl::build(const Module &m) {
  Function main = m.main();
  if (!main)
    return error("the module has no @main");
  llvm::Error err = llvm::Error::success();
  llvm::DenseMap<const ExprNode *, std::vector<unsigned>> ids;

  for (size_t i = 0; i < main->params().size(); ++i) {
    const Var &p = main->params()[i];
    unsigned v = newValue(p->type(), "input %" + p->name(), err);
    values[v].kind = Value::Input;
    values[v].input = i;
    ids[p.get()] = {v};
    inputSpecs.push_back({p->name(), values[v].dtype, values[v].shape});
  }
  if (err)
    return err;

  // Uses of each node, to decide activation fusion.
  llvm::DenseMap<const ExprNode *, unsigned> uses;
  llvm::DenseSet<const ExprNode *> seen;
  auto visited = [&](const Expr &e) { return seen.count(e.get()) != 0; };
  ExpandDataflow(main->body(), visited, [&](const Expr &e) {
    if (!seen.insert(e.get()).second)
      return;
    if (auto *c = llvm::dyn_cast<CallNode>(e.get()))
      for (const Expr &a : c->args())
        ++uses[a.get()];
    else if (auto *t = llvm::dyn_cast<TupleNode>(e.get()))
      for (const Expr &f : t->fields())
        ++uses[f.get()];
    else if (auto *g = llvm::dyn_cast<TupleGetItemNode>(e.get()))
      ++uses[g->tuple().get()];
  });
  ++uses[main->body().get()];
  llvm::DenseMap<const ExprNode *, size_t> stepOf;
  // Activations folded into a step, by the step: what reads one reads
  // that step's output.
  llvm::DenseMap<const ExprNode *, size_t> foldedInto;
  llvm::DenseSet<const ExprNode *> mainOutputs;
  if (auto *t = llvm::dyn_cast<TupleNode>(main->body().get()))
    for (const Expr &f : t->fields())
      mainOutputs.insert(f.get());
  else
    mainOutputs.insert(main->body().get());

  // The value of an operand; constants become values on first use.
  auto valueOf = [&](const Expr &e, const llvm::Twine &user) -> std::optional<unsigned> {
    auto it = ids.find(e.get());
    if (it != ids.end())
      return it->second.size() == 1 ? std::optional<unsigned>(it->second[0]) : std::nullopt;
    auto *k = llvm::dyn_cast<ConstantNode>(e.get());
    if (!k)
      return std::nullopt;
    unsigned v = newValue(k->type(), user + ": constant", err);
    if (err)
      return std::nullopt;
    auto t = materializeConstant(*k);
    if (!t) {
      err = error(user + ": " + llvm::toString(t.takeError()));
      return std::nullopt;
    }
    values[v].kind = Value::Constant;
    values[v].constant = std::move(*t);
    ids[e.get()] = {v};
    return v;
  };

  KernelBuildContext kctx;
  kctx.numThreads = opts.numThreads;
  seen.clear();
  ExpandDataflow(main->body(), visited, [&](const Expr &e) {
    if (err || !seen.insert(e.get()).second)
      return;
    const ExprNode *n = e.get();
    if (llvm::isa<OpNode>(n) || llvm::isa<FunctionNode>(n) || llvm::isa<VarNode>(n))
      return;
    if (llvm::isa<ConstantNode>(n))
      return; // materialized on first use as a value (weights stay with their kernel)
    if (auto *t = llvm::dyn_cast<TupleNode>(n)) {
      std::vector<unsigned> fields;
      for (const Expr &f : t->fields()) {
        auto v = valueOf(f, "model output");
        if (!v) {
          if (!err)
            err = error("a tuple field is not a tensor value");
          return;
        }
        fields.push_back(*v);
      }
      ids[n] = fields;
      return;
    }
    if (auto *g = llvm::dyn_cast<TupleGetItemNode>(n)) {
      auto &fields = ids[g->tuple().get()];
      if (g->index() >= fields.size()) {
        err = error("tuple field " + llvm::Twine(g->index()) + " out of range");
        return;
      }
      ids[n] = {fields[g->index()]};
      return;
    }
    auto *c = llvm::cast<CallNode>(n);
    Step step;
    step.op = clipInput(c->calleeName());
    step.name = c->name();
    step.loc = c->loc();
    bool isExpr = llvm::isa<FunctionNode>(c->callee().get());
    for (size_t i = 0; i < c->numArgs(); ++i) {
      if (c->keys()[i].role == ArgRole::Weight && !isExpr)
        continue;
      auto v = valueOf(c->arg(i), describe(*c));
      if (!v) {
        if (!err)
          err = error(describe(*c) + ": argument " + llvm::Twine(i) + " is not a tensor value");
        return;
      }
      step.inputs.push_back(*v);
    }
    bool empty = holdsNoElement(c->type());
    llvm::Expected<std::unique_ptr<OpKernel>> kernel =
        isExpr ? (empty ? std::make_unique<EmptyResultKernel>()
                        : makeExprKernel(*c, *llvm::cast<FunctionNode>(c->callee().get()), kctx))
               : [&]() -> llvm::Expected<std::unique_ptr<OpKernel>> {
          KernelFactory f = KernelRegistry::global().lookup(c->opDef());
          if (!f)
            return error(describe(*c) + ": op '" + clipInput(c->calleeName()) +
                         "' has no kernel in the interpreter");
          if (empty)
            return std::make_unique<EmptyResultKernel>();
          return f(*c, kctx);
        }();
    if (!kernel) {
      err = kernel.takeError();
      return;
    }
    std::vector<unsigned> outs;
    if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c->type().get())) {
      for (size_t i = 0; i < tt->size(); ++i)
        outs.push_back(newValue(tt->fields()[i], describe(*c), err));
    } else {
      outs.push_back(newValue(c->type(), describe(*c), err));
    }
    if (err)
      return;
    ids[n] = outs;

    // An activation whose only input is a fusable producer used once (and
    // not a model output) is folded into that producer's epilogue.
    float slope = 0;
    Act act = opts.fuseActivations ? activationOf(*c, &slope) : Act::None;
    if (act != Act::None && step.inputs.size() == 1) {
      const ExprNode *src = dataArgs(*c)[0];
      auto st = stepOf.find(src);
      if (st != stepOf.end() && uses[src] == 1 && !mainOutputs.count(src)) {
        auto *fk = dynamic_cast<FusableKernel *>(steps[st->second].kernel.get());
        if (fk && steps[st->second].outputs.size() == 1) {
          fk->fuseActivation(act, slope);
          steps[st->second].op += "+" + step.op;
          values[outs[0]].kind = Value::Alias;
          values[outs[0]].aliasOf = root(step.inputs[0]);
          foldedInto[n] = st->second;
          return;
        }
      }
    }
    // An op whose only data input is the output of a fusable step, read by
    // nothing else, may be absorbed whole into that step (a 1x1 expansion
    // takes the depthwise layer after it). The step then writes this op's
    // output; the one between them is never stored.
    if (opts.fuseActivations && !isExpr && step.inputs.size() == 1 && outs.size() == 1) {
      const ExprNode *src = dataArgs(*c)[0];
      std::optional<size_t> st;
      if (auto it = stepOf.find(src); it != stepOf.end())
        st = it->second;
      else if (auto folded = foldedInto.find(src); folded != foldedInto.end())
        st = folded->second;
      if (st && uses[src] == 1 && !mainOutputs.count(src)) {
        Step &producer = steps[*st];
        auto *fk = dynamic_cast<FusableKernel *>(producer.kernel.get());
        if (fk && producer.outputs.size() == 1 && fk->absorb(*kernel)) {
          producer.op += "+" + step.op;
          producer.outputs = outs;
          stepOf[n] = *st;
          return;
        }
      }
    }
    if (int vi = (*kernel)->viewOfInput(); vi >= 0 && size_t(vi) < step.inputs.size() &&
                                           outs.size() == 1 &&
                                           values[step.inputs[vi]].bytes == values[outs[0]].bytes) {
      // Reshape-like: the result aliases its input, no step is needed.
      values[outs[0]].kind = Value::Alias;
      // Straight to the root: a chain of views stays one hop deep.
      values[outs[0]].aliasOf = root(step.inputs[vi]);
      return;
    }
    step.kernel = std::move(*kernel);
    step.outputs = outs;
    stepOf[n] = steps.size();
    steps.push_back(std::move(step));
  });
  if (err)
    return err;
  if (!ids.count(main->body().get()))
    if (auto v = valueOf(main->body(), "model output"))
      (void)v;
  if (err)
    return err;
  auto it = ids.find(main->body().get());
  if (it == ids.end())
    return error("main's result has no value");
  outputs = it->second;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value &v = values[outputs[i]];
    outputSpecs.push_back({"out" + std::to_string(i), v.dtype, v.shape});
  }
  return plan();
}

namespace {

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

/// Places each arena value at its definition (best fit, see ArenaSpace),
/// freeing buffers after their last reader; values aliased by views live
/// as long as their views.
llvm::Error CompiledModel::Impl::plan() {
  for (size_t s = 0; s < steps.size(); ++s) {
    for (unsigned o : steps[s].outputs)
      values[root(o)].defStep = int(s);
    for (unsigned i : steps[s].inputs) {
      Value &r = values[root(i)];
      r.lastUse = std::max(r.lastUse, int(s));
    }
    workspaceBytes = std::max(workspaceBytes, steps[s].kernel->workspaceBytes());
  }
  for (unsigned o : outputs)
    values[root(o)].lastUse = int(steps.size()); // read after the last step

  // Values defined at each step, and values whose last reader is each step.
  std::vector<std::vector<unsigned>> defsAt(steps.size()), freedAfter(steps.size() + 1);
  for (size_t v = 0; v < values.size(); ++v)
    if (values[v].kind == Value::Arena && values[v].defStep >= 0) {
      defsAt[values[v].defStep].push_back(v);
      freedAfter[size_t(std::max(values[v].lastUse, values[v].defStep))].push_back(v);
    }
  auto sizeOf = [&](unsigned v) { return (values[v].bytes + 63) / 64 * 64; };
  ArenaSpace space;
  for (size_t s = 0; s < steps.size(); ++s) {
    for (unsigned v : defsAt[s]) {
      unplanned += sizeOf(v);
      values[v].offset = space.allocate(sizeOf(v));
    }
    for (unsigned v : freedAfter[s])
      space.release(values[v].offset, sizeOf(v));
  }
  arenaBytes = space.highWater();
  if (auto e = checkMemory())
    return e;
  try {
    arena = alignedAlloc(arenaBytes);
    workspace = alignedAlloc(workspaceBytes);
  } catch (const std::bad_alloc &) {
    return error("cannot allocate " + llvm::Twine(arenaBytes + workspaceBytes) +
                 " bytes of activation memory");
  }
  bound.resize(values.size());
  for (size_t v = 0; v < values.size(); ++v) {
    const Value &val = values[v];
    if (val.kind == Value::Arena)
      bound[v] = Tensor::view(val.dtype, val.shape, static_cast<uint8_t *>(arena.get()) + val.offset);
    else if (val.kind == Value::Constant)
      bound[v] = val.constant;
  }
  stepMs.assign(steps.size(), 0.0);
  return llvm::Error::success();
}

/// Refuses a plan that needs more than opts.maxMemoryBytes (by default the
/// machine's physical memory), naming the step whose buffer is largest.
llvm::Error CompiledModel::Impl::checkMemory() const {
  size_t limit = opts.maxMemoryBytes;
  if (limit == 0) {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    limit = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : SIZE_MAX;
  }
  if (arenaBytes <= limit && workspaceBytes <= limit - arenaBytes)
    return llvm::Error::success();
  // The step defining the largest value, or needing the most scratch.
  size_t largest = 0;
  const Step *culprit = nullptr;
  for (const Value &v : values)
    if (v.kind == Value::Arena && v.defStep >= 0 && v.bytes > largest)
      largest = v.bytes, culprit = &steps[size_t(v.defStep)];
  for (const Step &st : steps)
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

llvm::Expected<std::unique_ptr<CompiledModel>> CompiledModel::compile(const Module &m,
                                                                     const CompileOptions &opts) {
  setNumThreads(opts.numThreads);
  std::unique_ptr<CompiledModel> cm(new CompiledModel());
  cm->impl_->opts = opts;
  if (auto e = cm->impl_->build(m))
    return e;
  return cm;
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

llvm::Expected<std::vector<Tensor>> CompiledModel::run(llvm::ArrayRef<Tensor> inputs) {
  Impl &I = *impl_;
  if (inputs.size() != I.inputSpecs.size())
    return error("the model takes " + llvm::Twine(I.inputSpecs.size()) + " input(s), got " +
                 llvm::Twine(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &s = I.inputSpecs[i];
    if (inputs[i].dtype() != s.dtype || llvm::ArrayRef<int64_t>(s.shape) != inputs[i].shape())
      return error("input " + llvm::Twine(i) + " (%" + s.name + ") must be " +
                   dtypeName(s.dtype) + shapeToString(s.shape) + ", got " +
                   dtypeName(inputs[i].dtype()) + shapeToString(inputs[i].shape()));
  }
  for (size_t v = 0; v < I.values.size(); ++v)
    if (I.values[v].kind == Value::Input)
      I.bound[v] = inputs[I.values[v].input];
  // Aliases take their root's bytes with their own shape.
  for (size_t v = 0; v < I.values.size(); ++v)
    if (I.values[v].kind == Value::Alias) {
      const Tensor &r = I.bound[I.root(v)];
      I.bound[v] = Tensor::view(I.values[v].dtype, I.values[v].shape, r.raw());
    }
  ExecContext ctx{I.workspace.get(), I.workspaceBytes};
  llvm::SmallVector<const Tensor *, 8> in;
  llvm::SmallVector<Tensor *, 4> out;
  for (size_t s = 0; s < I.steps.size(); ++s) {
    Step &st = I.steps[s];
    in.clear();
    out.clear();
    for (unsigned v : st.inputs)
      in.push_back(&I.bound[v]);
    for (unsigned v : st.outputs)
      out.push_back(&I.bound[v]);
    if (I.opts.profile) {
      auto t0 = std::chrono::steady_clock::now();
      st.kernel->run(in, out, ctx);
      I.stepMs[s] += std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    } else {
      st.kernel->run(in, out, ctx);
    }
    if (I.opts.checkNan)
      for (size_t o = 0; o < out.size(); ++o)
        if (hasNan(*out[o]))
          return error("NaN in output " + llvm::Twine(o) + " of " + st.op +
                       (st.name.empty() ? "" : " " + quoteInput(st.name)) +
                       (st.loc.valid() ? " (line " + llvm::Twine(st.loc.line) + ")" : ""));
  }
  ++I.runs;
  std::vector<Tensor> result;
  for (unsigned v : I.outputs) {
    const Tensor &src = I.bound[v];
    Tensor t = Tensor::empty(src.dtype(), src.shape());
    std::memcpy(t.raw(), src.raw(), t.nbytes());
    if (I.opts.checkNan && hasNan(t))
      return error("NaN in model output " + llvm::Twine(result.size()));
    result.push_back(std::move(t));
  }
  return result;
}

llvm::ArrayRef<TensorSpec> CompiledModel::inputSpecs() const { return impl_->inputSpecs; }
llvm::ArrayRef<TensorSpec> CompiledModel::outputSpecs() const { return impl_->outputSpecs; }
size_t CompiledModel::arenaBytes() const { return impl_->arenaBytes; }
size_t CompiledModel::unplannedBytes() const { return impl_->unplanned; }
size_t CompiledModel::workspaceBytes() const { return impl_->workspaceBytes; }
size_t CompiledModel::numSteps() const { return impl_->steps.size(); }

std::vector<OpProfile> CompiledModel::profile() const {
  std::map<std::pair<std::string, std::string>, OpProfile> byOp;
  for (size_t s = 0; s < impl_->steps.size(); ++s) {
    const Step &st = impl_->steps[s];
    OpProfile &p = byOp[{st.op, st.name}];
    p.op = st.op;
    p.name = st.name;
    p.totalMs += impl_->stepMs[s];
    p.calls += impl_->runs;
  }
  std::vector<OpProfile> r;
  for (auto &[k, p] : byOp)
    r.push_back(p);
  std::sort(r.begin(), r.end(),
            [](const OpProfile &a, const OpProfile &b) { return a.totalMs > b.totalMs; });
  return r;
}

} // namespace kc::rt
