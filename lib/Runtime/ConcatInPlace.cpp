//===- ConcatInPlace.cpp - Concatenations their producers write -----------===//
//
// A concatenation whose pieces lie end to end in its result (torch.cat of
// one image's channels: the extent before the axis is 1) need not copy
// them: each piece's producer can write straight into its place in the
// result, and the concatenation's step goes. Over the concatenations from
// the last to the first, so that an outer one places the pieces of the
// inner ones:
//
// - pieces placed: each piece's bytes (its root, when the piece is the
//   whole of it: a convolution's output under a folded ReLU) become an
//   alias into the result's root at the piece's offset;
// - a view: pieces already end to end in one root (a densenet block's
//   shorter concatenations, once the longest placed the features) make the
//   result an alias of that stretch.
//
// Roots are written by several steps then; the memory plan holds each
// from the first of them (Plan.cpp).
//
//===----------------------------------------------------------------------===//
#include "kc/Runtime/Schedule.h"

#include <cstdint>

namespace kc::rt {

void placeConcatenations(Schedule &s) {
  std::vector<ScheduleValue> &values = s.values;
  // Model outputs and their roots keep their own bytes: an output written
  // in place goes to the caller's tensor, not the arena.
  std::vector<bool> output(values.size(), false);
  for (unsigned o : s.outputs)
    output[o] = output[s.root(o)] = true;
  // Each root's aliases, moved along with it so that every alias stays
  // one hop from its root.
  std::vector<std::vector<unsigned>> aliases(values.size());
  for (unsigned v = 0; v < values.size(); ++v)
    if (values[v].kind == ScheduleValue::Alias)
      aliases[values[v].aliasOf].push_back(v);
  auto offsetOf = [&](unsigned v) {
    return values[v].kind == ScheduleValue::Alias ? values[v].aliasOffset : size_t(0);
  };
  auto moveInto = [&](unsigned root, unsigned into, size_t offset) {
    for (unsigned a : aliases[root]) {
      values[a].aliasOf = into;
      values[a].aliasOffset += offset;
      aliases[into].push_back(a);
    }
    aliases[root].clear();
    values[root].kind = ScheduleValue::Alias;
    values[root].aliasOf = into;
    values[root].aliasOffset = offset;
    aliases[into].push_back(root);
  };

  std::vector<bool> placed(s.steps.size(), false);
  // The step whose pieces a root was last seen among: a piece twice in
  // one cat cannot be placed twice.
  std::vector<size_t> seenIn(values.size(), SIZE_MAX);
  for (size_t i = s.steps.size(); i-- > 0;) {
    const ScheduleStep &st = s.steps[i];
    if (!st.kernel->joinsInputsEndToEnd() || st.outputs.size() != 1 || st.inputs.empty())
      continue;
    const unsigned c = st.outputs[0], into = s.root(c);
    if (output[c] || values[into].kind != ScheduleValue::Arena)
      continue;
    size_t total = 0;
    for (unsigned p : st.inputs)
      total += values[p].bytes;
    if (total != values[c].bytes)
      continue;

    // Pieces placed: each the whole of an arena root of its own.
    std::vector<unsigned> roots;
    bool own = true;
    for (unsigned p : st.inputs) {
      unsigned r = s.root(p);
      own = own && values[r].kind == ScheduleValue::Arena && r != into && !output[r] &&
            offsetOf(p) == 0 && values[r].bytes == values[p].bytes &&
            values[p].dtype == values[c].dtype && seenIn[r] != i;
      seenIn[r] = i;
      roots.push_back(r);
    }
    if (own) {
      size_t at = offsetOf(c);
      for (size_t k = 0; k < roots.size(); ++k) {
        moveInto(roots[k], into, at);
        at += values[st.inputs[k]].bytes;
      }
      placed[i] = true;
      continue;
    }

    // A view: the pieces end to end in one root already.
    const unsigned from = s.root(st.inputs[0]);
    bool view = values[c].kind == ScheduleValue::Arena && values[from].kind == ScheduleValue::Arena;
    size_t at = offsetOf(st.inputs[0]);
    for (unsigned p : st.inputs) {
      view = view && s.root(p) == from && offsetOf(p) == at && values[p].dtype == values[c].dtype;
      at += values[p].bytes;
    }
    if (view) {
      moveInto(c, from, offsetOf(st.inputs[0]));
      placed[i] = true;
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (!placed[i] && kept++ != i)
      s.steps[kept - 1] = std::move(s.steps[i]);
  s.steps.resize(kept);
}

} // namespace kc::rt
