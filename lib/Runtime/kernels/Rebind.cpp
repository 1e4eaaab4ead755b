//===- Rebind.cpp - Kernels of ops that are other ops in disguise ---------===//
#include "Rebind.h"

namespace kc::rt {

llvm::Expected<std::unique_ptr<OpKernel>> kernelAs(const CallNode &c, llvm::StringRef opName,
                                                   llvm::ArrayRef<Expr> args,
                                                   llvm::ArrayRef<ArgKey> keys, Attrs attrs,
                                                   const KernelBuildContext &ctx, Type resultType) {
  const OpDef *op = OpRegistry::global().lookup(opName);
  const KernelEntry *entry = KernelRegistry::global().lookup(op);
  if (!entry)
    return kernelError(c, "runs as " + opName + ", which has no kernel");
  Call as = call(op->node(), args, std::move(attrs), keys, c.name());
  as->setType(resultType ? resultType : c.type());
  as->setLoc(c.loc());
  llvm::Expected<std::unique_ptr<OpKernel>> k = std::unique_ptr<OpKernel>();
  if (llvm::Error e = checkDTypes(*as, *entry))
    k = std::move(e);
  else
    k = entry->factory(*as, ctx);
  if (k)
    return k;
  // "<op> 'name' (line N): why" names the other op: name c instead.
  std::string msg = llvm::toString(k.takeError());
  std::string prefix = llvm::toString(kernelError(*as, ""));
  if (llvm::StringRef(msg).startswith(prefix))
    msg = msg.substr(prefix.size());
  return kernelError(c, msg);
}

} // namespace kc::rt
