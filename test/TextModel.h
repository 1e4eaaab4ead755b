//===- TextModel.h - Run a one-op model written in kc text ------*- C++ -*-===//
///
/// \file
/// For tests that pin one op's answer or refusal: parse kc text, infer its
/// types, compile and run it, and report the first error of any stage as
/// text (what kc-run would print after its `error: `).
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Parser.h"
#include "kc/IR/TypeInference.h"
#include "kc/Runtime/Interpreter.h"

#include <cstring>
#include <string>
#include <vector>

namespace kc::test {

/// `fn @main(<params>) -> ? { %0 = <call> : ?  return %0 }`.
inline std::string oneOp(const std::string &params, const std::string &call) {
  return "fn @main(" + params + ") -> ? {\n  %0 = " + call + " : ?\n  return %0\n}\n";
}

/// The error of parsing and inferring `text`, or "" when both succeed.
inline std::string typeError(const std::string &text) {
  auto m = parseModule(text, "t.kc");
  if (!m)
    return llvm::toString(m.takeError());
  llvm::Error e = inferTypes(**m);
  return e ? llvm::toString(std::move(e)) : "";
}

/// What running `text` on `inputs` gives: its outputs, or the first error.
struct TextRun {
  std::vector<rt::Tensor> outputs;
  std::string error;
};

inline TextRun runText(const std::string &text, const std::vector<rt::Tensor> &inputs) {
  TextRun r;
  auto m = parseModule(text, "t.kc");
  if (!m) {
    r.error = llvm::toString(m.takeError());
    return r;
  }
  if (llvm::Error e = inferTypes(**m)) {
    r.error = llvm::toString(std::move(e));
    return r;
  }
  auto cm = rt::CompiledModel::compile(**m, {});
  if (!cm) {
    r.error = llvm::toString(cm.takeError());
    return r;
  }
  auto out = (*cm)->run(inputs);
  if (!out)
    r.error = llvm::toString(out.takeError());
  else
    r.outputs = std::move(*out);
  return r;
}

/// A tensor of `dtype` T with `shape` holding `values` in order.
template <typename T>
rt::Tensor tensorOf(DType dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
  rt::Tensor t = rt::Tensor::empty(dtype, shape);
  if (!values.empty()) // an empty tensor may have no storage to copy to
    std::memcpy(t.raw(), values.data(), values.size() * sizeof(T));
  return t;
}
inline rt::Tensor f32(std::vector<int64_t> shape, const std::vector<float> &values) {
  return tensorOf(DType::F32, std::move(shape), values);
}

/// A tensor's f32 elements.
inline std::vector<float> values(const rt::Tensor &t) {
  const float *p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

} // namespace kc::test
