//===- RecurrentOps.cpp - nn.LSTM, nn.GRU, nn.RNN -------------------------===//
//
// Operands: the input, then the initial state when the model passes one
// (h0, and c0 for nn.LSTM). Results: the output sequence, then as many of
// h_n (and c_n) as the model uses. The weights are weight_ih_l<k>,
// weight_hh_l<k>, bias_ih_l<k>, bias_hh_l<k> (and weight_hr_l<k> with
// proj_size), with a _reverse suffix for the second direction.
//
//===----------------------------------------------------------------------===//
#include "TypeRuleUtils.h"

using namespace kc;
using namespace kc::typerules;

namespace {

llvm::Expected<Type> recurrent(const CallNode &c) {
  const TensorTypeNode *in = dataType(c, 0);
  if (!in)
    return Type();
  bool lstm = c.calleeName() == "nn.LSTM";
  int64_t H = c.attrs().getInt("hidden_size", 0), L = c.attrs().getInt("num_layers", 1);
  int64_t P = lstm && c.attrs().getInt("proj_size", 0) > 0 ? c.attrs().getInt("proj_size", 0) : H;
  int64_t D = c.attrs().getBool("bidirectional", false) ? 2 : 1;
  bool bf = c.attrs().getBool("batch_first", false);
  if (H <= 0 || L <= 0)
    return fail(c, "hidden_size and num_layers must be positive");
  if (in->rank() != 2 && in->rank() != 3)
    return fail(c, "expects a (L, N, H_in) input, (N, L, H_in) batch first, or (L, H_in)");
  bool unbatched = in->rank() == 2;
  std::vector<int64_t> out(in->dims().begin(), in->dims().end());
  out.back() = D * P;
  int64_t N = unbatched ? 1 : in->dim(bf ? 0 : 1);
  std::vector<int64_t> h = {L * D, N, P}, cell = {L * D, N, H};
  if (unbatched)
    h.erase(h.begin() + 1), cell.erase(cell.begin() + 1);
  std::vector<Type> all = {tensorType(in->dtype(), out), tensorType(in->dtype(), h)};
  if (lstm)
    all.push_back(tensorType(in->dtype(), cell));
  auto *declared = llvm::dyn_cast_or_null<TupleTypeNode>(c.type().get());
  if (!declared)
    return all[0];
  if (declared->size() > all.size())
    return fail(c, "declares " + llvm::Twine(declared->size()) + " results, more than " +
                       llvm::Twine(all.size()));
  all.resize(declared->size());
  return tupleType(all);
}

#define KC_RECURRENT(ID, NAME, DOC)                                                                \
  KC_REGISTER_OP(ID, NAME)                                                                         \
      .describe(DOC)                                                                               \
      .input("input")                                                                              \
      .attr("input_size", AttrValue::integer(0), true)                                             \
      .attr("hidden_size", AttrValue::integer(0), true)                                            \
      .attr("num_layers", AttrValue::integer(1))                                                   \
      .attr("bias", AttrValue::boolean(true))                                                      \
      .attr("batch_first", AttrValue::boolean(false))                                              \
      .attr("bidirectional", AttrValue::boolean(false))                                            \
      .outputs(-1)                                                                                 \
      .flags(OpFlags::Pure | OpFlags::Variadic)                                                    \
      .typeRule(recurrent)
KC_RECURRENT(lstm_, "nn.LSTM", "long short-term memory layers")
    .attr("proj_size", AttrValue::integer(0));
KC_RECURRENT(gru_, "nn.GRU", "gated recurrent unit layers");
KC_RECURRENT(rnn_, "nn.RNN", "Elman recurrent layers (tanh or relu)")
    .attr("nonlinearity", AttrValue::string("tanh"));

} // namespace
