//===- IndexOps.cpp - Embedding, index_select, gather, scatter_add --------===//
//
// Ops indexed by an i64 tensor: rows of a table (nn.Embedding, and
// F.embedding whose table is an operand), entries along a dim
// (index_select, gather), and sums into them (scatter_add).
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

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
