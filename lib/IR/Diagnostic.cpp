//===- Diagnostic.cpp - Errors that point into the input ------------------===//
#include "kc/IR/Diagnostic.h"
#include "kc/Support/Quote.h"

namespace kc {

std::string describeCall(const CallNode &c) {
  std::string who = clipInput(c.calleeName());
  if (!c.name().empty())
    who += " " + quoteInput(c.name());
  return who;
}

std::string describeNode(const ExprNode &e) {
  if (auto *c = llvm::dyn_cast<CallNode>(&e))
    return describeCall(*c);
  return nodeKindName(e.kind()).str();
}

llvm::Error moduleError(const Module &m, SourceLoc loc, const llvm::Twine &msg) {
  std::string where = m.sourceName().empty() ? "<module>" : m.sourceName();
  if (loc.valid())
    where += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  return llvm::createStringError(llvm::inconvertibleErrorCode(), where + ": error: " + msg);
}

} // namespace kc
