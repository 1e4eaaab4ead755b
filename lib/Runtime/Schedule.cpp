//===- Schedule.cpp - Kernels bound to a module's calls -------------------===//
//
// Binding, fusion and aliasing, call by call in dataflow order. Which calls
// run as one step is decided in the IR (passes/FuseOps.cpp groups them into
// fused functions); here the calls of a group are bound one by one and
// joined where their kernels can join (foldActivation, absorbReader).
//
//===----------------------------------------------------------------------===//
#include "kc/Runtime/Schedule.h"
#include "kc/IR/Diagnostic.h"
#include "kc/IR/Functor.h"
#include "kc/IR/OpCost.h"
#include "kc/IR/Rpn.h"
#include "kc/IR/Uses.h"
#include "kc/Runtime/ExprKernel.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace kc::rt {

std::optional<Activation> fusableActivation(const CallNode &c) {
  const OpDef *d = c.opDef();
  switch (d ? d->activation() : ActivationKind::None) {
  case ActivationKind::None: return std::nullopt;
  case ActivationKind::Relu: return Activation{Act::Relu};
  case ActivationKind::Relu6: return Activation{Act::Relu6};
  case ActivationKind::Silu: return Activation{Act::Silu};
  case ActivationKind::Sigmoid: return Activation{Act::Sigmoid};
  case ActivationKind::Hardswish: return Activation{Act::Hardswish};
  case ActivationKind::LeakyRelu:
    return Activation{Act::LeakyRelu, float(c.attrs().getFloat("negative_slope", 0.01))};
  case ActivationKind::Gelu: {
    std::string approximate = c.attrs().getString("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      return std::nullopt; // the kernel refuses it, naming the op
    return Activation{approximate == "tanh" ? Act::GeluTanh : Act::Gelu};
  }
  }
  return std::nullopt;
}

namespace {

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string describe(const CallNode &c) {
  std::string s = describeCall(c);
  if (c.loc().valid())
    s += " (line " + std::to_string(c.loc().line) + ")";
  return s;
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
  void run(llvm::ArrayRef<const Tensor *>, llvm::ArrayRef<Tensor *>, ExecContext &) const override {
  }
};

class Scheduler {
public:
  Scheduler(const Module &m, const ScheduleOptions &opts)
      : m_(m), main_(m.main()), opts_(opts), uses_(countUses(main_)) {
    kctx_.numThreads = opts.numThreads;
    kctx_.module = &m;
    if (auto *t = llvm::dyn_cast<TupleNode>(main_->body().get()))
      for (const Expr &f : t->fields())
        mainOutputs_.insert(f.get());
    else
      mainOutputs_.insert(main_->body().get());
  }

  llvm::Expected<Schedule> run(llvm::ArrayRef<Expr> order) {
    for (size_t i = 0; i < main_->params().size(); ++i) {
      const Var &p = main_->params()[i];
      unsigned v = newValue(p->type(), "input %" + p->name());
      s_.values[v].kind = ScheduleValue::Input;
      s_.values[v].input = unsigned(i);
      ids_[p.get()] = {v};
      s_.inputSpecs.push_back({p->name(), s_.values[v].dtype, s_.values[v].shape});
    }
    if (err_)
      return std::move(err_);
    for (const Expr &e : order) {
      visit(e);
      if (err_)
        return std::move(err_);
    }
    if (!ids_.count(main_->body().get()))
      (void)valueOf(main_->body(), "model output");
    if (err_)
      return std::move(err_);
    auto it = ids_.find(main_->body().get());
    if (it == ids_.end())
      return error("main's result has no value");
    s_.outputs = it->second;
    if (opts_.fuse)
      placeConcatenations(s_);
    for (size_t i = 0; i < s_.outputs.size(); ++i) {
      const ScheduleValue &v = s_.values[s_.outputs[i]];
      s_.outputSpecs.push_back({"out" + std::to_string(i), v.dtype, v.shape});
    }
    return std::move(s_);
  }

private:
  void visit(const Expr &e);
  void visitFused(const CallNode &c, const FunctionNode &fn);
  unsigned newValue(const Type &t, const llvm::Twine &what);
  std::optional<unsigned> valueOf(const Expr &e, const llvm::Twine &user);
  llvm::Expected<std::unique_ptr<OpKernel>> bind(const CallNode &c, const FunctionNode *fn);
  bool readByOneOnly(const ExprNode *src) const;
  ScheduleStep *soleProducer(const CallNode &c, const ScheduleStep &step);
  bool foldActivation(const CallNode &c, ScheduleStep &step, llvm::ArrayRef<unsigned> outs);
  bool foldExpression(const CallNode &c, const OpKernel &kernel, const ScheduleStep &step,
                      llvm::ArrayRef<unsigned> outs);
  void absorbInputScale(const CallNode &c, OpKernel &kernel, ScheduleStep &step);
  bool absorbReader(const CallNode &c, std::unique_ptr<OpKernel> &kernel, const ScheduleStep &step,
                    llvm::ArrayRef<unsigned> outs);

  const Module &m_;
  Function main_;
  ScheduleOptions opts_;
  KernelBuildContext kctx_;
  llvm::DenseMap<const ExprNode *, unsigned> uses_;
  llvm::DenseSet<const ExprNode *> mainOutputs_;
  /// Inside a fused group's body: its calls may join into one step.
  bool inGroup_ = false;
  /// The first step of the group being scheduled.
  size_t groupFirstStep_ = 0;
  Schedule s_;
  llvm::Error err_ = llvm::Error::success();
  llvm::DenseMap<const ExprNode *, std::vector<unsigned>> ids_;
  /// The step that computes a node's value: its own, or the one that
  /// folded or absorbed it.
  llvm::DenseMap<const ExprNode *, size_t> stepOf_;
};

unsigned Scheduler::newValue(const Type &t, const llvm::Twine &what) {
  ScheduleValue v;
  auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
  if (!tt || !tt->isStatic()) {
    if (!err_)
      err_ = error(what + ": the interpreter needs a static tensor type, got " + typeToString(t));
  } else {
    v.dtype = tt->dtype();
    v.shape.assign(tt->dims().begin(), tt->dims().end());
    v.bytes = size_t(numElements(v.shape)) * dtypeSize(v.dtype);
  }
  s_.values.push_back(std::move(v));
  return unsigned(s_.values.size() - 1);
}

/// The value of an operand; constants become values on first use.
std::optional<unsigned> Scheduler::valueOf(const Expr &e, const llvm::Twine &user) {
  auto it = ids_.find(e.get());
  if (it != ids_.end())
    return it->second.size() == 1 ? std::optional<unsigned>(it->second[0]) : std::nullopt;
  auto *k = llvm::dyn_cast<ConstantNode>(e.get());
  if (!k)
    return std::nullopt;
  unsigned v = newValue(k->type(), user + ": constant");
  if (err_)
    return std::nullopt;
  auto t = materializeConstant(*k);
  if (!t) {
    err_ = error(user + ": " + llvm::toString(t.takeError()));
    return std::nullopt;
  }
  s_.values[v].kind = ScheduleValue::Constant;
  s_.values[v].constant = std::move(*t);
  ids_[e.get()] = {v};
  return v;
}

/// The kernel of call c, of function fn (its callee in the module) or of
/// an op when null.
llvm::Expected<std::unique_ptr<OpKernel>> Scheduler::bind(const CallNode &c,
                                                          const FunctionNode *fn) {
  bool empty = holdsNoElement(c.type());
  if (fn) {
    if (empty)
      return std::make_unique<EmptyResultKernel>();
    return makeExprKernel(c, *fn, kctx_);
  }
  const KernelEntry *k = KernelRegistry::global().lookup(c.opDef());
  if (!k)
    return error(describe(c) + ": op '" + clipInput(c.calleeName()) +
                 "' has no kernel in the interpreter");
  if (auto e = checkDTypes(c, *k))
    return std::move(e);
  if (empty)
    return std::make_unique<EmptyResultKernel>();
  // Factories read attributes type rules may not have (IntAttrCheck).
  IntAttrCheck check;
  auto kernel = k->factory(c, kctx_);
  std::string bad = check.failure(c.attrs());
  if (bad.empty())
    return kernel;
  if (!kernel)
    llvm::consumeError(kernel.takeError());
  return kernelError(c, bad);
}

/// Whether src's value is read by one call only and is no model output, so
/// that the step computing it may fold its reader in.
bool Scheduler::readByOneOnly(const ExprNode *src) const {
  auto it = uses_.find(src);
  return it != uses_.end() && it->second == 1 && !mainOutputs_.count(src);
}

/// The step computing the only data input of call c (whose step is
/// `step`), if that input is a single output read by c alone.
ScheduleStep *Scheduler::soleProducer(const CallNode &c, const ScheduleStep &step) {
  if (step.inputs.size() != 1)
    return nullptr;
  const ExprNode *src = c.dataArgs()[0];
  auto st = stepOf_.find(src);
  if (st == stepOf_.end() || !readByOneOnly(src))
    return nullptr;
  ScheduleStep &producer = s_.steps[st->second];
  return producer.outputs.size() == 1 ? &producer : nullptr;
}

/// An activation whose only input is a producer's single output, read by
/// nothing else, is folded into that producer's epilogue; its value becomes
/// an alias of the producer's.
bool Scheduler::foldActivation(const CallNode &c, ScheduleStep &step,
                               llvm::ArrayRef<unsigned> outs) {
  std::optional<Activation> act = inGroup_ && opts_.fuse ? fusableActivation(c) : std::nullopt;
  ScheduleStep *producer = act ? soleProducer(c, step) : nullptr;
  if (!producer || s_.root(producer->outputs[0]) != s_.root(step.inputs[0]) ||
      !producer->kernel->fuseActivation(*act))
    return false;
  producer->op += "+" + step.op;
  producer->flops = plusFlops(producer->flops, step.flops);
  s_.values[outs[0]].kind = ScheduleValue::Alias;
  s_.values[outs[0]].aliasOf = s_.root(step.inputs[0]);
  stepOf_[&c] = size_t(producer - s_.steps.data());
  return true;
}

/// An expression one of whose operands is a producer's single output, read
/// by nothing else, with the expression's shape, is folded into that
/// producer's epilogue (a residual sum after a convolution); the
/// producer's step takes the expression's other operands as inputs, and
/// the expression's value becomes an alias of the producer's.
bool Scheduler::foldExpression(const CallNode &c, const OpKernel &kernel, const ScheduleStep &step,
                               llvm::ArrayRef<unsigned> outs) {
  if (!inGroup_ || !opts_.fuse || outs.size() != 1 || step.inputs.size() != c.numArgs())
    return false;
  // The operand a producer of this group computes; every other operand
  // comes from before the group, so the producer's step may read it.
  std::optional<unsigned> fromProducer;
  ScheduleStep *producer = nullptr;
  for (unsigned i = 0; i < c.numArgs(); ++i) {
    auto st = stepOf_.find(c.arg(i).get());
    if (st == stepOf_.end() || st->second < groupFirstStep_)
      continue;
    if (fromProducer || !readByOneOnly(c.arg(i).get()))
      return false;
    fromProducer = i;
    producer = &s_.steps[st->second];
  }
  if (!producer || producer->outputs.size() != 1 ||
      s_.root(producer->outputs[0]) != s_.root(step.inputs[*fromProducer]))
    return false;
  std::unique_ptr<OutputExpression> e = makeOutputExpression(kernel, *fromProducer);
  if (!e || !producer->kernel->fuseExpression(e, unsigned(producer->inputs.size())))
    return false;
  for (unsigned i = 0; i < step.inputs.size(); ++i)
    if (i != *fromProducer)
      producer->inputs.push_back(step.inputs[i]);
  producer->op += "+" + step.op;
  producer->flops = plusFlops(producer->flops, step.flops);
  s_.values[outs[0]].kind = ScheduleValue::Alias;
  s_.values[outs[0]].aliasOf = s_.root(producer->outputs[0]);
  stepOf_[&c] = size_t(producer - s_.steps.data());
  return true;
}

/// A kernel whose only data input is a per-channel scale (x * s, the gate
/// of a squeeze-and-excitation block) computed by the step just before it
/// in its group, and read by it alone, may scale its input as it reads it:
/// its step then reads x and s, and the step computing the product goes.
void Scheduler::absorbInputScale(const CallNode &c, OpKernel &kernel, ScheduleStep &step) {
  if (!inGroup_ || !opts_.fuse || step.inputs.size() != 1 || s_.steps.size() <= groupFirstStep_)
    return;
  const ExprNode *src = c.dataArgs()[0];
  auto st = stepOf_.find(src);
  size_t last = s_.steps.size() - 1;
  if (st == stepOf_.end() || st->second != last || !readByOneOnly(src))
    return;
  ScheduleStep &prev = s_.steps[last];
  std::optional<ChannelScaleOperands> cs = channelScale(*prev.kernel);
  if (prev.outputs.size() != 1 || s_.root(prev.outputs[0]) != s_.root(step.inputs[0]) || !cs ||
      !kernel.fuseInputScale(cs->perImage))
    return;
  step.inputs = {prev.inputs[cs->x], prev.inputs[cs->s]};
  step.op = prev.op + "+" + step.op;
  step.flops = plusFlops(prev.flops, step.flops);
  stepOf_.erase(src);
  s_.steps.pop_back();
}

/// An op whose only data input is the single output of a step, read by
/// nothing else, may be absorbed whole into that step (a 1x1 expansion
/// takes the depthwise layer after it): the step then writes this op's
/// output, and the value between them is never stored.
bool Scheduler::absorbReader(const CallNode &c, std::unique_ptr<OpKernel> &kernel,
                             const ScheduleStep &step, llvm::ArrayRef<unsigned> outs) {
  ScheduleStep *producer =
      inGroup_ && opts_.fuse && outs.size() == 1 ? soleProducer(c, step) : nullptr;
  std::unique_ptr<OpKernel> both = producer ? producer->kernel->absorb(*kernel) : nullptr;
  if (!both)
    return false;
  producer->kernel = std::move(both);
  producer->op += "+" + step.op;
  producer->flops = plusFlops(producer->flops, step.flops);
  producer->outputs.assign(outs.begin(), outs.end());
  stepOf_[&c] = size_t(producer - s_.steps.data());
  return true;
}

void Scheduler::visit(const Expr &e) {
  const ExprNode *n = e.get();
  if (llvm::isa<OpNode>(n) || llvm::isa<GlobalVarNode>(n) || llvm::isa<VarNode>(n) ||
      llvm::isa<ConstantNode>(n))
    return; // constants become values on first use (weights stay with their kernel)
  if (auto *t = llvm::dyn_cast<TupleNode>(n)) {
    std::vector<unsigned> fields;
    for (const Expr &f : t->fields()) {
      auto v = valueOf(f, "model output");
      if (!v) {
        if (!err_)
          err_ = error("a tuple field is not a tensor value");
        return;
      }
      fields.push_back(*v);
    }
    ids_[n] = fields;
    return;
  }
  if (auto *g = llvm::dyn_cast<TupleGetItemNode>(n)) {
    auto &fields = ids_[g->tuple().get()];
    if (g->index() >= fields.size()) {
      err_ = error(
          "tuple field " + llvm::Twine(g->index()) + " out of range" +
          (g->loc().valid() ? " (line " + std::to_string(g->loc().line) + ")" : std::string()));
      return;
    }
    ids_[n] = {fields[g->index()]};
    return;
  }
  if (auto items = listExpressionItems(*n, m_)) {
    // A list of operands computes nothing: it stands for its tensors, in
    // item order (Tensor.index's indices).
    auto *lc = llvm::cast<CallNode>(n);
    std::vector<unsigned> fields;
    for (int a : *items) {
      if (a < 0)
        continue;
      auto v = valueOf(lc->arg(size_t(a)), describe(*lc));
      if (!v) {
        if (!err_)
          err_ = error(describe(*lc) + ": list item " + llvm::Twine(a) + " is not a tensor value");
        return;
      }
      fields.push_back(*v);
    }
    ids_[n] = fields;
    return;
  }
  auto *c = llvm::cast<CallNode>(n);
  const FunctionNode *fn = m_.callee(*c);
  if (fn && fn->isFused())
    return visitFused(*c, *fn);
  ScheduleStep step;
  step.op = clipInput(c->calleeName());
  step.name = c->name();
  step.loc = c->loc();
  if (opts_.countFlops)
    step.flops = flopCount(*c, m_);
  bool isExpr = c->global() != nullptr;
  for (size_t i = 0; i < c->numArgs(); ++i) {
    if (c->keys()[i].role == ArgRole::Weight && !isExpr)
      continue;
    if (listExpressionItems(*c->arg(i), m_)) {
      // Only Tensor.index reads a list operand (as its index tensors);
      // any other op would take the list's tensors for other operands.
      if (c->calleeName() != "Tensor.index") {
        err_ =
            error(describe(*c) + ": a list operand of '" + c->calleeName() + "' is not supported");
        return;
      }
      const auto &fields = ids_[c->arg(i).get()];
      step.inputs.insert(step.inputs.end(), fields.begin(), fields.end());
      continue;
    }
    auto v = valueOf(c->arg(i), describe(*c));
    if (!v) {
      if (!err_)
        err_ = error(describe(*c) + ": argument " + llvm::Twine(i) + " is not a tensor value");
      return;
    }
    step.inputs.push_back(*v);
  }
  llvm::Expected<std::unique_ptr<OpKernel>> kernel = bind(*c, fn);
  if (!kernel) {
    err_ = kernel.takeError();
    return;
  }
  std::vector<unsigned> outs;
  if (auto *tt = llvm::dyn_cast_or_null<TupleTypeNode>(c->type().get())) {
    for (size_t i = 0; i < tt->size(); ++i)
      outs.push_back(newValue(tt->fields()[i], describe(*c)));
  } else {
    outs.push_back(newValue(c->type(), describe(*c)));
  }
  if (err_)
    return;
  ids_[n] = outs;
  if (!isExpr)
    absorbInputScale(*c, **kernel, step);
  if (foldActivation(*c, step, outs) || (isExpr && foldExpression(*c, **kernel, step, outs)) ||
      (!isExpr && absorbReader(*c, *kernel, step, outs)))
    return;
  if (int vi = (*kernel)->viewOfInput();
      vi >= 0 && size_t(vi) < step.inputs.size() && outs.size() == 1 &&
      s_.values[step.inputs[vi]].bytes == s_.values[outs[0]].bytes) {
    // Reshape-like: the result aliases its input, no step is needed.
    s_.values[outs[0]].kind = ScheduleValue::Alias;
    // Straight to the root: a chain of views stays one hop deep.
    s_.values[outs[0]].aliasOf = s_.root(step.inputs[vi]);
    return;
  }
  step.kernel = std::move(*kernel);
  step.outputs = outs;
  stepOf_[n] = s_.steps.size();
  s_.steps.push_back(std::move(step));
}

/// A call of a fused group: its body's calls are scheduled in place, with
/// its parameters standing for the call's arguments, and join into one step
/// where their kernels can (a kernel that cannot take the activation after
/// it leaves that activation a step of its own).
void Scheduler::visitFused(const CallNode &c, const FunctionNode &fn) {
  if (inGroup_ || fn.params().size() != c.numArgs()) {
    err_ = error(describe(c) + ": a fused group must be called from main with one argument per "
                               "parameter");
    return;
  }
  // A group called twice is scheduled twice: its calls' values are the
  // previous call's until they are visited again.
  std::vector<Expr> body;
  DataflowVisit(fn.body(), [&](const Expr &e) {
    if (llvm::isa<CallNode>(e.get()) || llvm::isa<TupleNode>(e.get()) ||
        llvm::isa<TupleGetItemNode>(e.get())) {
      ids_.erase(e.get());
      stepOf_.erase(e.get());
    }
    body.push_back(e);
  });
  for (size_t i = 0; i < c.numArgs(); ++i) {
    auto v = valueOf(c.arg(i), describe(c));
    if (!v) {
      if (!err_)
        err_ = error(describe(c) + ": argument " + llvm::Twine(i) + " is not a tensor value");
      return;
    }
    ids_[fn.params()[i].get()] = {*v};
  }
  llvm::DenseMap<const ExprNode *, unsigned> outer = std::move(uses_);
  uses_ = countUses(Function(&fn));
  inGroup_ = true;
  groupFirstStep_ = s_.steps.size();
  for (const Expr &e : body) {
    visit(e);
    if (err_)
      break;
  }
  inGroup_ = false;
  uses_ = std::move(outer);
  if (err_)
    return;
  // Copied out first: inserting the call's entry may move the map's
  // entries.
  std::vector<unsigned> result = ids_.lookup(fn.body().get());
  ids_[&c] = std::move(result);
}

} // namespace

llvm::Expected<Schedule> buildSchedule(const Module &m, llvm::ArrayRef<Expr> order,
                                       const ScheduleOptions &opts) {
  return Scheduler(m, opts).run(order);
}

} // namespace kc::rt
