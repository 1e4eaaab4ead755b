//===- ExprKernel.cpp - Expression programs at run time -------------------===//
#include "kc/Runtime/ExprKernel.h"
#include "kc/IR/ExprFunctions.h"
#include "kc/IR/Rpn.h"
#include "kc/Support/FloatToInt.h"
#include "kc/Support/Quote.h"
#include "kernels/CallInfo.h"
#include "kernels/Epilogue.h"
#include "kernels/Parallel.h"
#include "ukernels/MicroKernels.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstring>
#include <omp.h>

namespace kc::rt {
namespace {

constexpr int64_t kBlock = 512;
/// Values a program may keep for reuse (2 KiB of workspace per thread
/// each); merge-expressions' programs of at most 256 instructions keep
/// at most 128.
constexpr unsigned kMaxSlots = 1024;

/// The functions of kc/IR/ExprFunctions.def that have a float value.
enum class Code : uint8_t {
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value) Id,
#include "kc/IR/ExprFunctions.def"
  Invalid
};

Code codeOf(llvm::StringRef op) {
  return llvm::StringSwitch<Code>(op)
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value) .Case(Name, Code::Id)
#define KC_EXPR_ALIAS(Id, Name, Arity, Flags, Doc, Of) .Case(Name, Code::Of)
#include "kc/IR/ExprFunctions.def"
      .Default(Code::Invalid);
}

bool isBinary(Code c) {
  switch (c) {
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value)                                             \
  case Code::Id:                                                                                   \
    return Arity == 2;
#include "kc/IR/ExprFunctions.def"
  default:
    return false;
  }
}

struct Instr {
  enum Kind : uint8_t { Arg, Literal, Apply, Save, Load } kind;
  Code code = Code::Invalid;
  unsigned index = 0; ///< Arg: argument; Literal: literal; Save, Load: slot
};

void apply(Code c, const float *a, const float *b, float *d, int64_t n) {
  // Each function's value on x (and y) in a loop of its own; unary ones
  // ignore y.
  switch (c) {
#define KC_EXPR_FN(Id, Name, Arity, Flags, Doc, Value)                                             \
  case Code::Id:                                                                                   \
    for (int64_t k = 0; k < n; ++k) {                                                              \
      float x = a[k], y = Arity == 2 ? b[k] : 0.f;                                                 \
      (void)y;                                                                                     \
      d[k] = float(Value);                                                                         \
    }                                                                                              \
    return;
#include "kc/IR/ExprFunctions.def"
  case Code::Invalid:
    return;
  }
}

class ExprKernel final : public OpKernel {
public:
  /// A stack of depth_ blocks and slots_ saved blocks for each thread, then
  /// the operands that are not f32, converted.
  size_t workspaceBytes() const override {
    return (stacksFloats() + convertedFloats_) * sizeof(float);
  }

  /// The activation after the expression is applied to each block as it is
  /// stored (fuse-ops groups the two).
  bool fuseActivation(const Activation &a) override {
    if (boolResult_ || act_ != Act::None)
      return false;
    act_ = a.kind;
    slope_ = a.slope;
    return true;
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &ctx) const override {
    float *y = boolResult_ ? nullptr : out[0]->data<float>();
    // Integer and bool operands meet f32 ones as PyTorch promotes them:
    // each value converted to f32 first.
    llvm::SmallVector<const float *, 8> args;
    float *converted = static_cast<float *>(ctx.workspace) + stacksFloats();
    for (size_t a = 0; a < in.size(); ++a) {
      if (in[a]->dtype() == DType::F32) {
        args.push_back(in[a]->data<float>());
        continue;
      }
      convertToFloat(*in[a], converted);
      args.push_back(converted);
      converted += in[a]->numel();
    }
    int64_t blocksPerRow = (inner_ + kBlock - 1) / kBlock;
    int64_t total = rows_ * blocksPerRow;
    int threads =
        int(std::min<int64_t>({omp_get_max_threads(), threads_, std::max<int64_t>(1, total)}));
    if (rows_ * inner_ < 32768)
      threads = 1;
    float *stacks = static_cast<float *>(ctx.workspace);
    parallelFor(
        total, threads > 1,
        [&](int64_t t) {
          float *scratch = stacks + size_t(omp_get_thread_num()) * (depth_ + slots_) * kBlock;
          int64_t row = t / blocksPerRow, j0 = (t % blocksPerRow) * kBlock;
          int64_t n = std::min(kBlock, inner_ - j0);
          const float *v = evaluate(args.data(), row, j0, n, scratch);
          if (boolResult_) {
            uint8_t *b = out[0]->data<uint8_t>() + row * inner_ + j0;
            for (int64_t k = 0; k < n; ++k)
              b[k] = v[k] != 0;
          } else {
            float *to = y + row * inner_ + j0;
            std::memcpy(to, v, sizeof(float) * n);
            if (act_ != Act::None)
              biasActivationRow(to, n, 0.f, act_, slope_);
          }
        },
        threads);
  }

  /// The program on the n (at most kBlock) elements of output row `row`
  /// from column j0: the block holding the result, in `scratch` ((depth_ +
  /// slots_) blocks) or, for a program that only reads, an argument's.
  const float *evaluate(const float *const *args, int64_t row, int64_t j0, int64_t n,
                        float *scratch) const {
    float *saved = scratch + depth_ * kBlock;
    const float *stack[64];
    unsigned sp = 0;
    for (const Instr &i : code_) {
      if (i.kind == Instr::Arg) {
        const float *base = args[i.index] + offsetOf(i.index, row);
        if (innerStride_[i.index]) {
          stack[sp] = base + j0;
        } else {
          float *s = scratch + sp * kBlock;
          std::fill(s, s + n, *base);
          stack[sp] = s;
        }
        ++sp;
      } else if (i.kind == Instr::Literal) {
        stack[sp++] = literals_.data() + i.index * kBlock;
      } else if (i.kind == Instr::Save) {
        std::memcpy(saved + i.index * kBlock, stack[sp - 1], sizeof(float) * n);
      } else if (i.kind == Instr::Load) {
        stack[sp++] = saved + i.index * kBlock;
      } else if (isBinary(i.code)) {
        float *d = scratch + (sp - 2) * kBlock;
        apply(i.code, stack[sp - 2], stack[sp - 1], d, n);
        stack[--sp - 1] = d;
      } else {
        float *d = scratch + (sp - 1) * kBlock;
        apply(i.code, stack[sp - 1], nullptr, d, n);
        stack[sp - 1] = d;
      }
    }
    return stack[0];
  }

  size_t stacksFloats() const { return size_t(threads_) * (depth_ + slots_) * kBlock; }

  static void convertToFloat(const Tensor &t, float *to) {
    int64_t n = t.numel();
    switch (t.dtype()) {
    case DType::I64:
      for (int64_t k = 0; k < n; ++k)
        to[k] = float(t.data<int64_t>()[k]);
      break;
    case DType::I32:
      for (int64_t k = 0; k < n; ++k)
        to[k] = float(t.data<int32_t>()[k]);
      break;
    default: // bool
      for (int64_t k = 0; k < n; ++k)
        to[k] = t.data<uint8_t>()[k] != 0;
      break;
    }
  }

  /// Element offset of row `row` in argument `a`.
  int64_t offsetOf(unsigned a, int64_t row) const {
    int64_t off = 0;
    for (size_t d = outer_.size(); d-- > 0;) {
      off += (row % outer_[d]) * strides_[a][d];
      row /= outer_[d];
    }
    return off;
  }

  std::vector<Instr> code_;
  std::vector<float> literals_;               ///< kBlock copies of each literal
  std::vector<int64_t> outer_;                ///< collapsed dims except the innermost
  std::vector<std::vector<int64_t>> strides_; ///< per argument, over outer_
  std::vector<int> innerStride_;              ///< per argument: 1 contiguous, 0 broadcast
  std::vector<bool> resultShaped_;            ///< per argument: of the result's shape
  std::vector<std::vector<int64_t>> argShapes_;
  std::vector<int64_t> resultShape_;
  int64_t rows_ = 1, inner_ = 1;
  size_t convertedFloats_ = 0; ///< elements of the operands that are not f32
  unsigned depth_ = 1;
  unsigned slots_ = 0; ///< blocks the program saves values in
  int threads_ = 1;    ///< threads the workspace holds a stack for
  bool boolResult_ = false;
  Act act_ = Act::None;
  float slope_ = 0.f;

  std::optional<ChannelScaleOperands> channelScale_; ///< matchChannelScale of the program
  /// The program is `%a %b add` of two parameters: a and b.
  std::optional<std::pair<unsigned, unsigned>> sumOf_;

  friend class ExprOnOutput;
  friend std::optional<ChannelScaleOperands> channelScale(const OpKernel &k);
};

/// An expression kernel's program applied in place to its operand `arg`.
class ExprOnOutput final : public OutputExpression {
public:
  ExprOnOutput(const ExprKernel &k, unsigned arg) : k_(k), arg_(arg) {
    // A plain sum of the output and one other operand (a residual, a
    // bias) takes the vectorized bias-and-activation loop.
    if (k.sumOf_ && (k.sumOf_->first == arg) != (k.sumOf_->second == arg))
      sumWith_ = int(k.sumOf_->first == arg ? k.sumOf_->second : k.sumOf_->first);
  }

  int addedOperand() const override {
    if (sumWith_ < 0 || !k_.resultShaped_[size_t(sumWith_)])
      return -1;
    return sumWith_ - (unsigned(sumWith_) > arg_ ? 1 : 0);
  }

  /// Programs whose stack and saved values fit scratch of this many blocks
  /// (on the caller's stack: 16 KiB).
  static constexpr unsigned kMaxBlocks = 8;

  void apply(float *y, int64_t begin, int64_t n, KernelInputs operands, Act act,
             float slope) const override {
    const ExprKernel &k = k_;
    llvm::SmallVector<const float *, 8> args;
    for (size_t a = 0, o = 0; a < k.innerStride_.size(); ++a)
      args.push_back(a == arg_ ? y : operands[o++]->data<float>());
    alignas(64) float scratch[kMaxBlocks * kBlock];
    const uk::MicroKernels &uks = uk::microKernels();
    for (int64_t pos = begin, end = begin + n; pos < end;) {
      int64_t row = pos / k.inner_, j0 = pos % k.inner_;
      int64_t len = std::min({end - pos, k.inner_ - j0, kBlock});
      float *to = y + pos;
      if (sumWith_ >= 0) {
        const float *other = args[size_t(sumWith_)] + k.offsetOf(unsigned(sumWith_), row);
        bool contiguous = k.innerStride_[size_t(sumWith_)];
        uks.biasAct[int(act)][contiguous](to, len, contiguous ? other + j0 : other, slope);
      } else {
        const float *v = k.evaluate(args.data(), row, j0, len, scratch);
        if (v != to)
          std::memcpy(to, v, sizeof(float) * len);
        if (act != Act::None)
          biasActivationRow(to, len, 0.f, act, slope);
      }
      pos += len;
    }
  }

private:
  ExprKernel k_;
  unsigned arg_;
  int sumWith_ = -1; ///< the other operand of a plain sum, else -1
};

} // namespace

std::optional<ChannelScaleOperands> channelScale(const OpKernel &kernel) {
  auto *k = dynamic_cast<const ExprKernel *>(&kernel);
  if (!k || k->boolResult_ || k->act_ != Act::None || k->convertedFloats_)
    return std::nullopt;
  return k->channelScale_;
}

std::unique_ptr<OutputExpression> makeOutputExpression(const OpKernel &kernel, unsigned arg) {
  auto *k = dynamic_cast<const ExprKernel *>(&kernel);
  if (!k || k->boolResult_ || k->act_ != Act::None || k->convertedFloats_ ||
      arg >= k->resultShaped_.size() || !k->resultShaped_[arg] ||
      k->depth_ + k->slots_ > ExprOnOutput::kMaxBlocks)
    return nullptr;
  return std::make_unique<ExprOnOutput>(*k, arg);
}

llvm::Expected<std::unique_ptr<OpKernel>>
makeExprKernel(const CallNode &call, const FunctionNode &fn, const KernelBuildContext &ctx) {
  auto prog = lowerToRpn(fn);
  if (!prog)
    return kernelError(call, llvm::toString(prog.takeError()));
  // An expression runs on tensors of known shapes: what is not known (the
  // type inference could not tell it) is named.
  auto known = [&](const Type &t, const llvm::Twine &what) -> llvm::Error {
    auto *tt = llvm::dyn_cast_or_null<TensorTypeNode>(t.get());
    if (tt && tt->isStatic())
      return llvm::Error::success();
    return kernelError(call, "the type of " + what + " is " + clipInput(typeToString(t)) +
                                 ", not a tensor of known shape (nothing declares it, and it "
                                 "cannot be inferred)");
  };
  if (auto e = known(call.type(), "its result"))
    return std::move(e);
  for (size_t i = 0; i < call.numArgs(); ++i)
    if (auto e = known(call.arg(i)->type(), "operand " + llvm::Twine(i)))
      return std::move(e);
  auto out = staticShape(call, call.type());
  if (!out)
    return out.takeError();
  size_t numArgs = call.numArgs();
  auto argDType = [&](size_t i) {
    return llvm::cast<TensorTypeNode>(call.arg(i)->type().get())->dtype();
  };
  bool boolArgs = true;
  for (size_t i = 0; i < numArgs; ++i)
    boolArgs = boolArgs && argDType(i) == DType::Bool;
  // Computed in f32: exact for f32 results, and for bool results of bool
  // operands (every value 0 or 1, or non-zero for true); integer results
  // past 2^24 would not be.
  DType result = llvm::cast<TensorTypeNode>(call.type().get())->dtype();
  if (result != DType::F32 && !(result == DType::Bool && boolArgs))
    return kernelError(call, "expression results of type " + typeToString(call.type()) +
                                 " are not supported at run time (only f32, and bool from "
                                 "bool operands)");
  std::vector<std::vector<int64_t>> argShapes;
  size_t convertedFloats = 0;
  for (size_t i = 0; i < numArgs; ++i) {
    auto s = staticShape(call, call.arg(i)->type());
    if (!s)
      return s.takeError();
    DType dt = argDType(i);
    if (dt != DType::F32 && dt != DType::I64 && dt != DType::I32 && dt != DType::Bool)
      return kernelError(call, "expression operand " + llvm::Twine(i) + " has type " +
                                   typeToString(call.arg(i)->type()) +
                                   " (f32, i64, i32 and bool are supported)");
    if (dt != DType::F32)
      convertedFloats += size_t(numElements(*s));
    argShapes.push_back(*s);
  }

  auto k = std::make_unique<ExprKernel>();
  k->convertedFloats_ = convertedFloats;
  k->boolResult_ = result == DType::Bool;
  for (const auto &s : argShapes)
    k->resultShaped_.push_back(s == *out);
  k->argShapes_ = argShapes;
  k->resultShape_ = *out;
  k->channelScale_ = matchChannelScale(*prog, argShapes, *out);
  if (const RpnInstr *b = prog->binaryOfParams(); b && b->op->name() == "add")
    k->sumOf_ = {prog->code[0].arg, prog->code[1].arg};
  // Rewrite the program: size() of an argument is a compile-time literal
  // (shapes are static); every other op must be a float op.
  struct Entry {
    bool isArg = false, isConst = false;
    unsigned arg = 0;
    double value = 0;
  };
  std::vector<Entry> sim, savedSim;
  std::vector<double> literalValues;
  auto pushLiteral = [&](double v) {
    k->code_.push_back({Instr::Literal, Code::Invalid, unsigned(literalValues.size())});
    literalValues.push_back(v);
  };
  for (const RpnInstr &in : prog->code) {
    switch (in.kind) {
    case RpnInstr::Kind::Arg:
      k->code_.push_back({Instr::Arg, Code::Invalid, in.arg});
      sim.push_back({true, false, in.arg, 0});
      break;
    case RpnInstr::Kind::Literal: {
      const AttrValue &v = in.literal;
      if (!v.isNumber() && !v.isBool())
        return kernelError(call, "expression literal " + attrToString(v) + " is not a number");
      double d = v.isBool() ? double(v.getBool()) : v.getNumber();
      pushLiteral(d);
      sim.push_back({false, true, 0, d});
      break;
    }
    case RpnInstr::Kind::Save:
      k->code_.push_back({Instr::Save, Code::Invalid, in.arg});
      savedSim.push_back(sim.back());
      break;
    case RpnInstr::Kind::Load:
      k->code_.push_back({Instr::Load, Code::Invalid, in.arg});
      sim.push_back(savedSim[in.arg]);
      break;
    case RpnInstr::Kind::Apply: {
      llvm::StringRef name = in.op->name();
      if (name == "size") {
        // size(@i) or size(@i, d): replace the pushed operands by a literal.
        Entry a = sim[sim.size() - in.numOperands];
        // Each operand must be the one instruction that pushed it.
        bool pushedDirectly = k->code_.size() >= in.numOperands &&
                              std::all_of(k->code_.end() - in.numOperands, k->code_.end(),
                                          [](const Instr &i) {
                                            return i.kind == Instr::Arg || i.kind == Instr::Literal;
                                          });
        if (!a.isArg || !pushedDirectly || (in.numOperands == 2 && !sim.back().isConst))
          return kernelError(call, "size() of a computed value is not supported");
        const auto &s = argShapes[a.arg];
        double v = double(numElements(s));
        if (in.numOperands == 2) {
          std::optional<int64_t> dim = exactInt64(sim.back().value);
          int64_t rank = int64_t(s.size());
          int d = dim && *dim >= -rank && *dim < rank ? normAxis(*dim, s.size()) : -1;
          if (d < 0 || d >= int(s.size()))
            return kernelError(call, "size() dim out of range");
          v = double(s[d]);
        }
        for (unsigned j = 0; j < in.numOperands; ++j) {
          k->code_.pop_back();
          sim.pop_back();
        }
        pushLiteral(v);
        sim.push_back({false, true, 0, v});
        break;
      }
      Code c = codeOf(name);
      if (c == Code::Invalid)
        return kernelError(call, "expression op '" + name + "' is not supported on f32 tensors");
      if ((c == Code::And || c == Code::Or || c == Code::Xor) && !boolArgs)
        return kernelError(call, "expression op '" + name +
                                     "' is supported on bool operands only (bitwise on integers)");
      if (in.numOperands != (isBinary(c) ? 2u : 1u))
        return kernelError(call, "expression op '" + name + "' has the wrong operand count");
      k->code_.push_back({Instr::Apply, c, 0});
      for (unsigned j = 0; j < in.numOperands; ++j)
        sim.pop_back();
      sim.push_back({});
      break;
    }
    }
  }
  if (sim.size() != 1)
    return kernelError(call, "malformed expression program");
  // Stack depth of the rewritten program.
  unsigned depth = 0, maxDepth = 1;
  for (const Instr &i : k->code_) {
    if (i.kind == Instr::Arg || i.kind == Instr::Literal || i.kind == Instr::Load)
      ++depth;
    else if (i.kind == Instr::Apply && isBinary(i.code))
      --depth;
    maxDepth = std::max(maxDepth, depth);
  }
  if (maxDepth > 64)
    return kernelError(call, "expression needs a stack deeper than 64");
  // Each slot is a block per thread of the workspace.
  if (prog->numSlots > kMaxSlots)
    return kernelError(call, "expression keeps " + llvm::Twine(prog->numSlots) +
                                 " values for reuse (at most " + llvm::Twine(kMaxSlots) + ")");
  k->depth_ = maxDepth;
  k->slots_ = prog->numSlots;
  k->threads_ = std::max(1, ctx.numThreads);
  for (double v : literalValues)
    k->literals_.insert(k->literals_.end(), kBlock, float(v));

  // Broadcast strides, then merge adjacent dims that every operand walks
  // the same way, so the innermost run is as long as possible.
  size_t r = out->size();
  std::vector<int64_t> dims = *out;
  std::vector<std::vector<int64_t>> strides(numArgs, std::vector<int64_t>(r, 0));
  for (size_t a = 0; a < numArgs; ++a) {
    const auto &s = argShapes[a];
    if (s.size() > r)
      return kernelError(call, "operand " + llvm::Twine(a) + " " + shapeToString(s) +
                                   " has more dims than the result " + shapeToString(*out));
    int64_t st = 1;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t d = s.size() - 1 - i, od = r - 1 - i;
      if (s[d] != 1 && s[d] != dims[od])
        return kernelError(call, "operand " + llvm::Twine(a) + " " + shapeToString(s) +
                                     " does not broadcast to " + shapeToString(*out));
      strides[a][od] = s[d] == 1 ? 0 : st;
      st *= s[d];
    }
  }
  std::vector<int64_t> cd;
  std::vector<std::vector<int64_t>> cs(numArgs);
  for (size_t i = 0; i < r; ++i) {
    if (dims[i] == 1)
      continue;
    bool merge = !cd.empty();
    for (size_t a = 0; a < numArgs && merge; ++a) {
      int64_t prev = cs[a].back();
      merge = (prev == 0 && strides[a][i] == 0) || (prev == strides[a][i] * dims[i] && prev != 0);
    }
    if (merge) {
      cd.back() *= dims[i];
      for (size_t a = 0; a < numArgs; ++a)
        cs[a].back() = strides[a][i];
    } else {
      cd.push_back(dims[i]);
      for (size_t a = 0; a < numArgs; ++a)
        cs[a].push_back(strides[a][i]);
    }
  }
  if (cd.empty()) {
    cd.push_back(1);
    for (auto &s : cs)
      s.push_back(0);
  }
  k->inner_ = cd.back();
  k->outer_.assign(cd.begin(), cd.end() - 1);
  k->rows_ = numElements(k->outer_);
  for (size_t a = 0; a < numArgs; ++a) {
    k->innerStride_.push_back(cs[a].back() != 0);
    k->strides_.push_back(std::vector<int64_t>(cs[a].begin(), cs[a].end() - 1));
  }
  return std::unique_ptr<OpKernel>(std::move(k));
}

} // namespace kc::rt
