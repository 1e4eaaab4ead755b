//===- Einsum.cpp - torch.einsum equations --------------------------------===//
#include "kc/IR/Einsum.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <map>

namespace kc {

static llvm::Error bad(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Labels in PyTorch's order, which orders an implicit result: upper
/// case first.
static int letter(char ch) {
  if (ch >= 'A' && ch <= 'Z')
    return ch - 'A';
  if (ch >= 'a' && ch <= 'z')
    return 26 + (ch - 'a');
  return -1;
}

/// The labels of one term, with `ell` standing for an ellipsis (-2).
static llvm::Expected<std::vector<int>> parseTerm(llvm::StringRef t) {
  std::vector<int> r;
  bool ellipsis = false;
  for (size_t i = 0; i < t.size();) {
    if (t.substr(i).startswith("...")) {
      if (ellipsis)
        return bad("more than one ellipsis in '" + t + "'");
      ellipsis = true;
      r.push_back(-2);
      i += 3;
      continue;
    }
    int l = letter(t[i]);
    if (l < 0 && t[i] != ' ')
      return bad("bad character '" + llvm::Twine(t[i]) + "' in '" + t + "'");
    if (l >= 0)
      r.push_back(l);
    ++i;
  }
  return r;
}

llvm::Expected<EinsumSpec> parseEinsum(llvm::StringRef equation,
                                       llvm::ArrayRef<std::vector<int64_t>> shapes) {
  auto [lhs, rhs] = equation.split("->");
  bool explicitOut = equation.contains("->");
  llvm::SmallVector<llvm::StringRef, 4> terms;
  lhs.split(terms, ',');
  if (terms.size() != shapes.size())
    return bad("the equation has " + llvm::Twine(terms.size()) + " operands, the call " +
               llvm::Twine(shapes.size()));
  EinsumSpec spec;
  spec.sizes.assign(kEllipsisLabel + 16, -1);
  size_t ellipsisRank = 0;
  bool anyEllipsis = false;
  std::vector<std::vector<int>> raw;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto t = parseTerm(terms[i]);
    if (!t)
      return t.takeError();
    size_t named = std::count_if(t->begin(), t->end(), [](int l) { return l >= 0; });
    bool hasEll = std::find(t->begin(), t->end(), -2) != t->end();
    if (!hasEll && named < shapes[i].size()) { // pnnx's dropped ellipsis
      t->insert(t->begin(), -2);
      hasEll = true;
    }
    if (named > shapes[i].size() || (!hasEll && named != shapes[i].size()))
      return bad("operand " + llvm::Twine(i) + " has " + llvm::Twine(shapes[i].size()) +
                 " dims for '" + terms[i] + "'");
    if (hasEll) {
      anyEllipsis = true;
      ellipsisRank = std::max(ellipsisRank, shapes[i].size() - named);
    }
    raw.push_back(*t);
  }
  if (ellipsisRank > 16)
    return bad("too many dims under the ellipsis");
  // Expand ellipses into right-aligned labels, record sizes (1 broadcasts).
  for (size_t i = 0; i < raw.size(); ++i) {
    std::vector<int> labels;
    size_t named = std::count_if(raw[i].begin(), raw[i].end(), [](int l) { return l >= 0; });
    size_t ell = shapes[i].size() - named;
    for (int l : raw[i]) {
      if (l != -2) {
        labels.push_back(l);
        continue;
      }
      for (size_t k = 0; k < ell; ++k)
        labels.push_back(kEllipsisLabel + int(ellipsisRank - ell + k));
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      int64_t &s = spec.sizes[labels[d]];
      int64_t x = shapes[i][d];
      if (s < 0 || s == 1)
        s = x;
      else if (x != 1 && x != s)
        return bad("label size " + llvm::Twine(x) + " in operand " + llvm::Twine(i) +
                   " does not match " + llvm::Twine(s));
    }
    spec.inputs.push_back(std::move(labels));
  }
  std::vector<int> ellipsisLabels;
  for (size_t k = 0; k < ellipsisRank; ++k)
    ellipsisLabels.push_back(kEllipsisLabel + int(k));
  if (explicitOut) {
    auto t = parseTerm(rhs);
    if (!t)
      return t.takeError();
    if (std::find(t->begin(), t->end(), -2) == t->end() && anyEllipsis)
      t->insert(t->begin(), -2); // pnnx's dropped ellipsis
    for (int l : *t) {
      if (l == -2) {
        spec.output.insert(spec.output.end(), ellipsisLabels.begin(), ellipsisLabels.end());
        continue;
      }
      if (std::count(spec.output.begin(), spec.output.end(), l))
        return bad("a label repeats in the result");
      if (spec.sizes[l] < 0)
        return bad("a result label is in no operand");
      spec.output.push_back(l);
    }
  } else {
    // Implicit: the ellipsis, then the labels used once, in order.
    std::map<int, int> count;
    for (auto &in : spec.inputs)
      for (int l : in)
        if (l < kEllipsisLabel)
          ++count[l];
    spec.output = ellipsisLabels;
    for (auto [l, n] : count)
      if (n == 1)
        spec.output.push_back(l);
  }
  return spec;
}

} // namespace kc
