//===- Importer.cpp - PNNX model to kc IR ---------------------------------===//
#include "kc/Import/Importer.h"
#include "kc/IR/Op.h"
#include "kc/Support/Quote.h"
#include "kc/Support/ZipArchive.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <optional>

namespace kc {

std::string weightPathFor(llvm::StringRef paramPath) {
  if (paramPath.endswith(".param"))
    return (paramPath.drop_back(6) + ".bin").str();
  return (paramPath + ".bin").str();
}

namespace {

/// The number of items of a pnnx.Expression body `[i0, i1, ...]` whose
/// items are all computed or operands (no literal, no None), or none.
std::optional<size_t> tensorItems(const Expr &body, llvm::ArrayRef<Var> params) {
  auto *c = llvm::dyn_cast<CallNode>(body.get());
  if (!c || c->calleeName() != "list" || c->numArgs() == 0)
    return std::nullopt;
  for (const Expr &a : c->args())
    if (!llvm::isa<CallNode>(a.get()) &&
        llvm::none_of(params, [&](const Var &v) { return v.get() == a.get(); }))
      return std::nullopt; // a literal or None
  return c->numArgs();
}

/// The value of a pnnx.Expression without operands whose expr is a
/// literal (`expr=1`, `expr=False`), or null.
const AttrValue *literalOperand(const Expr &e, const llvm::StringMap<Function> &functions) {
  auto *c = llvm::dyn_cast<CallNode>(e.get());
  const FunctionNode *fn = c && c->global() ? functions.lookup(c->global()->name()).get() : nullptr;
  if (!fn || !fn->isPrimitive() || !fn->params().empty())
    return nullptr;
  auto *k = llvm::dyn_cast<ConstantNode>(fn->body().get());
  return k && k->isScalar() ? &k->scalar() : nullptr;
}

/// pnnx writes torch.sort and Tensor.sort as `aten::sort`, its arguments
/// literal operands in the order of the TorchScript overload: (self, dim,
/// descending) or (self, stable, dim, descending). Those with literals
/// become a call of torch.sort with attributes; others stay as written.
bool sortAsAttributes(std::vector<Expr> &inputs, Attrs &attrs,
                      const llvm::StringMap<Function> &functions) {
  const char *const plain[] = {"dim", "descending"};
  const char *const stable[] = {"stable", "dim", "descending"};
  llvm::ArrayRef<const char *> names;
  if (inputs.size() == 3)
    names = plain;
  else if (inputs.size() == 4)
    names = stable;
  else
    return false;
  Attrs a;
  for (size_t i = 0; i < names.size(); ++i) {
    const AttrValue *v = literalOperand(inputs[i + 1], functions);
    if (!v || (names[i] == llvm::StringRef("dim") ? !v->isInt() : !v->isBool()))
      return false;
    a.set(names[i], *v);
  }
  attrs = std::move(a);
  inputs.resize(1);
  return true;
}

class Importer {
public:
  Importer(llvm::StringRef file, const ZipReader *zip, const ImportOptions &opts)
      : file_(file), zip_(zip), opts_(opts) {}

  llvm::Expected<ModulePtr> run(const ParamFile &pf);

private:
  llvm::Error errorAt(const ParamOp &op, unsigned col, const llvm::Twine &msg) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file_ + ":" + llvm::Twine(op.line) + ":" + llvm::Twine(col) +
                                       ": error: " + msg);
  }
  llvm::Error opError(const ParamOp &op, const llvm::Twine &msg) const {
    return errorAt(op, 1, clipInput(op.type) + " " + quoteInput(op.name) + ": " + msg);
  }

  llvm::Expected<Type> typeOf(const ParamOp &op, const ShapeDecl &d) const;
  /// The declared type of an operand, or null when it has no annotation.
  llvm::Expected<Type> operandType(const ParamOp &op, const std::string &operand) const;
  /// The declared types of the op's outputs (null where not annotated).
  llvm::Expected<std::vector<Type>> outputTypes(const ParamOp &op) const {
    std::vector<Type> fields;
    for (const std::string &o : op.outputs) {
      auto t = operandType(op, o);
      if (!t)
        return t.takeError();
      fields.push_back(*t);
    }
    return fields;
  }
  llvm::Expected<Constant> weight(const ParamOp &op, const std::string &key, const ShapeDecl &d);
  llvm::Error define(const ParamOp &op, size_t outIndex, Expr value);

  llvm::StringRef file_;
  const ZipReader *zip_;
  const ImportOptions &opts_;
  /// The declared type of each annotated operand, and where it was first
  /// declared.
  struct Declared {
    ShapeDecl decl;
    unsigned line, col;
  };
  llvm::Error declare(const ParamOp &op, const Annotation &a);
  llvm::StringMap<Declared> annotations_;
  llvm::StringMap<Expr> values_;
  llvm::StringMap<unsigned> definedOn_;
};

llvm::Expected<Type> Importer::typeOf(const ParamOp &op, const ShapeDecl &d) const {
  int64_t n = 1;
  for (int64_t x : d.dims)
    if (x > 0 && (n > opts_.maxElements / x || (n *= x) > opts_.maxElements))
      return opError(op, "a shape of " + llvm::Twine(d.dims.size()) +
                             " dims has more than the limit of " + llvm::Twine(opts_.maxElements) +
                             " elements");
  return tensorType(d.dtype, d.dims);
}

llvm::Expected<Type> Importer::operandType(const ParamOp &op, const std::string &operand) const {
  auto it = annotations_.find(operand);
  if (it == annotations_.end())
    return Type();
  return typeOf(op, it->second.decl);
}

/// Records annotation `a`. Annotations of one operand (its producer's, each
/// consumer's, or two on one line) must agree: same dtype, rank and static
/// dims, where `?` agrees with any size and `null` with any dtype; the most
/// precise is kept. Anything else is a contradiction, and no declaration
/// may silently win over another.
llvm::Error Importer::declare(const ParamOp &op, const Annotation &a) {
  auto [it, fresh] = annotations_.try_emplace(a.operand, Declared{a.decl, op.line, a.col});
  if (fresh)
    return llvm::Error::success();
  ShapeDecl &have = it->second.decl;
  bool agree = have.dims.size() == a.decl.dims.size() &&
               (have.dtype == a.decl.dtype || have.dtype == DType::Unknown ||
                a.decl.dtype == DType::Unknown);
  for (size_t k = 0; agree && k < have.dims.size(); ++k)
    agree = have.dims[k] < 0 || a.decl.dims[k] < 0 || have.dims[k] == a.decl.dims[k];
  if (!agree)
    return errorAt(op, a.col,
                   "operand " + quoteInput(a.operand) + " is declared " + a.decl.text() +
                       " here, but " + have.text() + " on line " + llvm::Twine(it->second.line) +
                       ":" + llvm::Twine(it->second.col));
  if (have.dtype == DType::Unknown)
    have.dtype = a.decl.dtype;
  for (size_t k = 0; k < have.dims.size(); ++k)
    if (have.dims[k] < 0)
      have.dims[k] = a.decl.dims[k];
  return llvm::Error::success();
}

llvm::Expected<Constant> Importer::weight(const ParamOp &op, const std::string &key,
                                          const ShapeDecl &d) {
  auto t = typeOf(op, d);
  if (!t)
    return t.takeError();
  std::string name = op.name + "." + key;
  auto *tt = llvm::cast<TensorTypeNode>(t->get());
  int64_t count = tt->numElements().value_or(0);
  uint64_t need = uint64_t(count) * dtypeSize(d.dtype);
  if (!zip_) {
    if (opts_.requireWeights)
      return opError(op, "weight " + quoteInput(name) + " needs the .bin archive, which is absent");
    return tensorConstant(name, *t, nullptr);
  }
  const ZipEntry *e = zip_->find(name);
  if (!e) {
    if (count == 0 || d.dtype == DType::Unknown)
      return tensorConstant(name, *t, TensorData::owned({}));
    return opError(op, "weight " + quoteInput(name) + " is missing from " + zip_->name());
  }
  bool scalarOk = d.dims.empty() && (e->size == 0 || e->size == dtypeSize(d.dtype));
  if (e->size != need && !scalarOk)
    return opError(op, zip_->name() + ": entry " + quoteInput(name) + " holds " +
                           llvm::Twine(e->size) + " bytes, but @" + key + " declares " +
                           typeToString(*t) + ", which needs " + llvm::Twine(need));
  auto file = zip_->file();
  return tensorConstant(name, *t, TensorData::borrowed(file, zip_->data(*e)));
}

llvm::Error Importer::define(const ParamOp &op, size_t outIndex, Expr value) {
  const std::string &operand = op.outputs[outIndex];
  auto [it, inserted] = definedOn_.try_emplace(operand, op.line);
  if (!inserted)
    return errorAt(op, op.outputCols[outIndex],
                   "operand " + quoteInput(operand) + " is already defined on line " +
                       llvm::Twine(it->second));
  values_[operand] = std::move(value);
  return llvm::Error::success();
}

llvm::Expected<ModulePtr> Importer::run(const ParamFile &pf) {
  auto m = std::make_shared<Module>();
  m->setSourceName(file_.str());
  // An annotation anywhere applies to the operand everywhere.
  for (const ParamOp &op : pf.ops)
    for (const Annotation &a : op.annotations)
      if (auto e = declare(op, a))
        return std::move(e);

  // Where each operand is produced, to tell a use before the definition (a
  // cycle or misordered lines) from a name that is never defined.
  llvm::StringMap<unsigned> producedOn;
  for (const ParamOp &op : pf.ops)
    for (const std::string &o : op.outputs)
      producedOn.try_emplace(o, op.line);
  // How many times each operand is read, and whether by model outputs
  // (pnnx.Output) only.
  struct Readers {
    int64_t count = 0;
    bool outputOnly = true;
  };
  llvm::StringMap<Readers> readers;
  for (const ParamOp &op : pf.ops)
    for (const std::string &i : op.inputs) {
      Readers &r = readers[i];
      ++r.count;
      r.outputOnly = r.outputOnly && op.type == "pnnx.Output";
    }
  // Names taken by operators, and by the functions made below.
  llvm::StringSet<> names;
  for (const ParamOp &op : pf.ops)
    names.insert(op.name);

  std::vector<Var> params;
  std::vector<Expr> outputs;
  llvm::StringMap<unsigned> opNames;
  std::vector<Function> exprFunctions;
  llvm::StringMap<Function> exprByName; // the same functions, by name

  for (const ParamOp &op : pf.ops) {
    auto [it, fresh] = opNames.try_emplace(op.name, op.line);
    if (!fresh)
      return errorAt(op, 1,
                     "operator name " + quoteInput(op.name) + " is already used on line " +
                         llvm::Twine(it->second));
    std::vector<Expr> inputs;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      auto v = values_.find(op.inputs[i]);
      if (v == values_.end()) {
        auto p = producedOn.find(op.inputs[i]);
        if (p == producedOn.end())
          return errorAt(op, op.inputCols[i],
                         "operand " + quoteInput(op.inputs[i]) + " is never defined");
        return errorAt(op, op.inputCols[i],
                       "operand " + quoteInput(op.inputs[i]) +
                           " is used before its definition on line " + llvm::Twine(p->second) +
                           " (a cycle, or lines out of order: operands must be defined on an "
                           "earlier line)");
      }
      inputs.push_back(v->second);
    }

    if (op.type == "pnnx.Input") {
      if (op.outputs.size() != 1 || !op.inputs.empty())
        return opError(op, "expected 0 inputs and 1 output");
      auto t = operandType(op, op.outputs[0]);
      if (!t)
        return t.takeError();
      Var v = var(op.outputs[0], *t);
      v->setLoc({op.line, 1});
      params.push_back(v);
      if (auto e = define(op, 0, v))
        return e;
      continue;
    }
    if (op.type == "pnnx.Output") {
      if (!op.outputs.empty())
        return opError(op, "expected no outputs");
      // A tuple or list feeding the output is flattened, as ncnn does; so
      // are tuples in it (nn.LSTM's output and (h, c)).
      std::function<void(const Expr &)> flatten = [&](const Expr &e) {
        if (auto *t = llvm::dyn_cast<TupleNode>(e.get()))
          for (const Expr &f : t->fields())
            flatten(f);
        else
          outputs.push_back(e);
      };
      for (const Expr &in : inputs)
        flatten(in);
      continue;
    }
    if (op.type == "pnnx.Attribute") {
      if (op.outputs.size() != 1 || op.weights.size() != 1 || !op.inputs.empty())
        return opError(op, "expected 0 inputs, 1 output and one @data attribute");
      auto c = weight(op, op.weights[0].first, op.weights[0].second);
      if (!c)
        return c.takeError();
      (*c)->setLoc({op.line, 1});
      if (auto e = define(op, 0, *c))
        return e;
      continue;
    }
    if (op.type == "prim::TupleUnpack") {
      // pnnx writes some multi-result ops (a max pool with its indices) as
      // one tuple result unpacked here: that op is given the fields as
      // its results, as if it had been written with several.
      if (op.inputs.size() != 1 || op.outputs.empty())
        return opError(op, "expected 1 input and at least 1 output");
      auto fields = outputTypes(op);
      if (!fields)
        return fields.takeError();
      const Expr &whole = inputs[0];
      if (llvm::isa<CallNode>(whole.get()) &&
          !llvm::isa_and_nonnull<TupleTypeNode>(whole->type().get()))
        whole->setType(tupleType(*fields));
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        TupleGetItem g = tupleGetItem(whole, unsigned(i));
        g->setType((*fields)[i]);
        g->setLoc({op.line, 1});
        if (auto e = define(op, i, g))
          return e;
      }
      continue;
    }
    if (op.type == "prim::TupleConstruct") {
      if (op.outputs.size() != 1)
        return opError(op, "expected 1 output");
      Tuple t = tuple(inputs);
      t->setLoc({op.line, 1});
      if (auto e = define(op, 0, t))
        return e;
      continue;
    }

    Expr callee;
    if (op.type == "pnnx.Expression") {
      const AttrValue *expr = op.param("expr");
      if (!expr || !expr->isString())
        return opError(op, "missing expr= parameter");
      if (op.outputs.size() != 1)
        return opError(op, "expected 1 output");
      std::vector<Var> fparams;
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        auto t = operandType(op, op.inputs[i]);
        if (!t)
          return t.takeError();
        fparams.push_back(var(std::to_string(i), *t));
      }
      auto body = parseExpression(expr->getString(), fparams, opts_.exprLimits);
      if (!body)
        return opError(op, "in expr=" + quoteInput(expr->getString()) + ": " +
                               llvm::toString(body.takeError()));
      auto items = tensorItems(*body, fparams);
      auto read = readers.find(op.outputs[0]);
      if (items && read != readers.end() && read->second.outputOnly) {
        // A list of tensors that only the model's outputs read (`return
        // [a + b, a * 2]`) is a tuple of results: one expression per
        // computed item, each a function of its own, and the operand
        // itself for an operand.
        std::vector<Expr> fields;
        for (size_t i = 0; i < *items; ++i) {
          std::vector<Var> ps;
          for (const Var &v : fparams)
            ps.push_back(var(v->name(), v->type()));
          auto whole = parseExpression(expr->getString(), ps, opts_.exprLimits);
          if (!whole)
            return whole.takeError();
          const Expr &item = llvm::cast<CallNode>(whole->get())->arg(i);
          auto p = llvm::find_if(ps, [&](const Var &v) { return v.get() == item.get(); });
          if (p != ps.end()) {
            // A bare operand is that operand's value.
            fields.push_back(inputs[size_t(p - ps.begin())]);
            continue;
          }
          std::string name = op.name + "_" + std::to_string(i);
          while (!names.insert(name).second)
            name += "_";
          Function fn = make<const FunctionNode>(name, ps, item, Type(), /*primitive=*/true);
          fn->setLoc({op.line, 1});
          exprFunctions.push_back(fn);
          exprByName[name] = fn;
          Call c = call(fn, inputs, Attrs(), {}, name);
          c->setLoc({op.line, 1});
          fields.push_back(c);
        }
        Tuple t = tuple(fields);
        t->setLoc({op.line, 1});
        if (auto e = define(op, 0, t))
          return e;
        continue;
      }
      auto rt = operandType(op, op.outputs[0]);
      if (!rt)
        return rt.takeError();
      Function fn = make<const FunctionNode>(op.name, fparams, *body, *rt, /*primitive=*/true);
      fn->setLoc({op.line, 1});
      exprFunctions.push_back(fn);
      exprByName[op.name] = fn;
      callee = globalVar(op.name);
    } else {
      callee = OpRegistry::global().getOrOpaque(op.type)->node();
    }

    std::vector<Expr> args = inputs;
    std::vector<ArgKey> keys;
    Attrs attrs;
    if (op.type == "aten::sort" && op.weights.empty() && op.params.empty() &&
        sortAsAttributes(args, attrs, exprByName)) {
      callee = OpRegistry::global().lookup("torch.sort")->node();
      // The literals read by this call alone become attributes: their
      // functions leave the module, as an export would not write them.
      for (size_t i = 1; i < inputs.size(); ++i)
        if (readers.lookup(op.inputs[i]).count == llvm::count(op.inputs, op.inputs[i]))
          llvm::erase_if(exprFunctions, [&](const Function &f) {
            return f->name() == llvm::cast<CallNode>(inputs[i].get())->calleeName();
          });
    }
    for (size_t i = 0; i < args.size(); ++i)
      keys.push_back(op.inputNames[i].empty() ? ArgKey{}
                                              : ArgKey{ArgRole::Named, op.inputNames[i]});
    for (auto &[key, decl] : op.weights) {
      auto c = weight(op, key, decl);
      if (!c)
        return c.takeError();
      args.push_back(*c);
      keys.push_back({ArgRole::Weight, key});
    }
    for (auto &[key, value] : op.params)
      if (!(op.type == "pnnx.Expression" && key == "expr"))
        attrs.set(key, value);
    Call c = call(callee, args, std::move(attrs), keys, op.name);
    c->setLoc({op.line, 1});
    if (op.outputs.size() == 1) {
      auto t = operandType(op, op.outputs[0]);
      if (!t)
        return t.takeError();
      c->setType(*t);
      if (auto e = define(op, 0, c))
        return e;
    } else if (op.outputs.size() > 1) {
      auto fields = outputTypes(op);
      if (!fields)
        return fields.takeError();
      c->setType(tupleType(*fields));
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        TupleGetItem g = tupleGetItem(c, i);
        g->setType((*fields)[i]);
        if (auto e = define(op, i, g))
          return e;
      }
    }
  }

  if (outputs.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file_ + ": error: the model has no pnnx.Output");
  Expr body = outputs.size() == 1 ? outputs[0] : Expr(tuple(outputs));
  Type ret = body->type();
  if (outputs.size() > 1) {
    std::vector<Type> fields;
    for (const Expr &o : outputs)
      fields.push_back(o->type());
    ret = tupleType(fields);
    body->setType(ret);
  }
  for (const Function &f : exprFunctions)
    m->add(f);
  m->add(make<const FunctionNode>("main", params, body, ret, /*primitive=*/false));
  return m;
}

} // namespace

llvm::Expected<ModulePtr> importPnnxFromBuffer(llvm::StringRef paramText, llvm::StringRef fileName,
                                               const ZipReader *weights,
                                               const ImportOptions &opts) {
  auto pf = parseParamFile(paramText, fileName, opts.paramLimits);
  if (!pf)
    return pf.takeError();
  return Importer(fileName, weights, opts).run(*pf);
}

llvm::Expected<ModulePtr> importPnnx(llvm::StringRef paramPath, llvm::StringRef binPath,
                                     const ImportOptions &opts) {
  auto buf = llvm::MemoryBuffer::getFile(paramPath, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return llvm::createStringError(buf.getError(),
                                   paramPath + ": error: cannot read: " + buf.getError().message());
  std::string bin = binPath.empty() ? weightPathFor(paramPath) : binPath.str();
  std::unique_ptr<ZipReader> zip;
  if (llvm::sys::fs::exists(bin)) {
    auto z = ZipReader::open(bin);
    if (!z)
      return z.takeError();
    zip = std::move(*z);
  } else if (!binPath.empty() || opts.requireWeights) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   bin + ": error: weight archive not found");
  }
  return importPnnxFromBuffer((*buf)->getBuffer(), paramPath, zip.get(), opts);
}

} // namespace kc
