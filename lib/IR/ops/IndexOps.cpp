//===- IndexOps.cpp - Embedding, index_select, gather, scatter_add --------===//
//
// Ops indexed by an i64 tensor: rows of a table (nn.Embedding, and
// F.embedding whose table is an operand), entries along a dim
// (index_select, gather), and sums into them (scatter_add).
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

#include "kc/IR/Rpn.h"

using namespace kc;
using namespace kc::typerules;

namespace {

const TensorTypeNode *namedType(const CallNode &c, llvm::StringRef name, size_t dflt) {
  if (const ExprNode *e = c.argByName(name))
    return llvm::dyn_cast_or_null<TensorTypeNode>(e->type().get());
  return dataType(c, dflt);
}

/// indices (...) and a (num, dim) table → (..., dim).
llvm::Expected<Type> embedding(const CallNode &c) {
  const TensorTypeNode *idx = namedType(c, "input", 0);
  const TensorTypeNode *table = nullptr;
  if (const ConstantNode *w = c.weight("weight"))
    table = llvm::dyn_cast_or_null<TensorTypeNode>(w->type().get());
  else
    table = namedType(c, "weight", 1);
  if (!idx || !table)
    return Type();
  if (table->rank() != 2)
    return fail(c, "the table must be 2-d");
  std::vector<int64_t> d(idx->dims().begin(), idx->dims().end());
  d.push_back(table->dim(1));
  return tensorType(table->dtype(), d);
}

llvm::Expected<Type> indexSelect(const CallNode &c) {
  const TensorTypeNode *in = namedType(c, "input", 0), *idx = namedType(c, "index", 1);
  if (!in || !idx)
    return Type();
  int64_t k = normDim(c.attrs().getInt("dim", 0), std::max<size_t>(in->rank(), 1));
  if (k < 0 || idx->rank() > 1)
    return fail(c, "expects a dim in range and a 1-d index");
  std::vector<int64_t> d(in->dims().begin(), in->dims().end());
  if (!d.empty())
    d[k] = idx->rank() ? idx->dim(0) : 1;
  return tensorType(in->dtype(), d);
}

/// gather: the index's shape; scatter_add: the input's.
llvm::Expected<Type> gather(const CallNode &c) {
  const TensorTypeNode *in = namedType(c, "input", 0), *idx = namedType(c, "index", 1);
  if (!in || !idx)
    return Type();
  if (in->rank() != idx->rank() || normDim(c.attrs().getInt("dim", 0), in->rank()) < 0)
    return fail(c, "input and index need the same rank and a dim in range");
  if (c.calleeName() == "torch.scatter_add")
    return tensorType(in->dtype(), in->dims());
  return tensorType(in->dtype(), idx->dims());
}

/// x[i0, None, i1]: the index tensors (inside the list expression) broadcast
/// to B, which replaces the indexed dims where they are adjacent and comes
/// first otherwise (NumPy's rule); the dims after the list stay.
llvm::Expected<Type> advancedIndex(const CallNode &c, const Module &m) {
  const TensorTypeNode *in = dataType(c, 0);
  auto items = c.numArgs() == 2 ? listExpressionItems(*c.arg(1), m) : std::nullopt;
  if (!in)
    return Type();
  // Constant indices pnnx writes into the call itself (x[:, [0, 2]] as
  // `expr=[None,[0,2]]`): the type is the one the file declares; the
  // interpreter refuses the form (AdvancedIndex.cpp).
  if (c.numArgs() == 1 && c.attrs().has("expr"))
    return Type();
  if (!items)
    return fail(c, "expects an input, then a list of index operands and Nones");
  if (items->size() > in->rank())
    return fail(c, "more indices than the input has dims");
  auto *list = llvm::cast<CallNode>(c.arg(1).get());
  std::vector<int64_t> b;
  int first = -1, last = -1, count = 0;
  for (size_t d = 0; d < items->size(); ++d) {
    if ((*items)[d] < 0)
      continue;
    auto *t = llvm::dyn_cast_or_null<TensorTypeNode>(list->arg(size_t((*items)[d]))->type().get());
    if (!t)
      return Type();
    auto bs = broadcast(b, t->dims());
    if (!bs)
      return fail(c, "the index shapes do not broadcast");
    b = *bs;
    first = first < 0 ? int(d) : first;
    last = int(d), ++count;
  }
  if (count == 0)
    return fail(c, "expects at least one index tensor");
  std::vector<int64_t> d;
  if (last - first + 1 != count)
    d = b;
  for (int k = 0; k < int(items->size()); ++k) {
    if (k == first && last - first + 1 == count)
      d.insert(d.end(), b.begin(), b.end());
    if ((*items)[size_t(k)] < 0)
      d.push_back(in->dim(size_t(k)));
  }
  for (size_t k = items->size(); k < in->rank(); ++k)
    d.push_back(in->dim(k));
  return tensorType(in->dtype(), d);
}

const OpFlags kPure = OpFlags::Pure;

KC_REGISTER_OP(embedding_, "nn.Embedding")
    .describe("rows of the weight table at the indices")
    .input("input")
    .weight("weight")
    .attr("num_embeddings", AttrValue::integer(0))
    .attr("embedding_dim", AttrValue::integer(0))
    .flags(kPure)
    .typeRule(embedding);
KC_REGISTER_OP(fembedding_, "F.embedding")
    .describe("rows of the table operand at the indices")
    .input("input")
    .input("weight")
    .flags(kPure)
    .typeRule(embedding);
KC_REGISTER_OP(index_select_, "torch.index_select")
    .describe("the entries of dim at the indices")
    .input("input")
    .input("index")
    .attr("dim", AttrValue::integer(0), true)
    .flags(kPure)
    .typeRule(indexSelect);
KC_REGISTER_OP(tensor_index_, "Tensor.index")
    .describe("x[i0, None, i1, ...]: advanced indexing by a list of i64 tensors and Nones")
    .input("input")
    .input("expr")
    .flags(kPure)
    .typeRule(advancedIndex);
KC_REGISTER_OP(gather_, "torch.gather")
    .describe("out[..i..] = input[..index[..i..]..] along dim")
    .input("input")
    .input("index")
    .attr("dim", AttrValue::integer(0), true)
    .flags(kPure)
    .typeRule(gather);
KC_REGISTER_OP(scatter_add_, "torch.scatter_add")
    .describe("input with src added at the indices along dim")
    .input("input")
    .input("index")
    .input("src")
    .attr("dim", AttrValue::integer(0), true)
    .flags(kPure)
    .typeRule(gather);

} // namespace
