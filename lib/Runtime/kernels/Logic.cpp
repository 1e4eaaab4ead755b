//===- Logic.cpp - Comparisons, logical and bitwise ops, where ------------===//
//
// Elementwise over operands broadcast to the result (each read through
// strides, 0 along a broadcast dim), a scalar attribute standing in for a
// missing operand. Element types: f32, i64 and bool operands (a bool is
// 0 or 1); integers compare as integers, anything with a float as double
// (exact for f32). Results: bool for comparisons and logical ops, the
// operands' type for bitwise ops, torch.where and masked_fill. Any other
// type is refused naming the op.
//
//===----------------------------------------------------------------------===//
#include "Operands.h"
#include "Parallel.h"

#include "kc/Support/FloatToInt.h"

namespace kc::rt {
namespace {

enum class Fn {
  Eq,
  Ne,
  Gt,
  Ge,
  Lt,
  Le,
  And,
  Or,
  Xor,
  Not,
  BitAnd,
  BitOr,
  BitXor,
  BitNot,
  Shl,
  Shr,
  Where,
  MaskedFill
};

/// One operand: a kernel input read through strides, or a scalar.
struct Arg {
  int input = -1;
  DType dtype = DType::F32;
  double scalar = 0;
  int64_t scalarInt = 0; ///< the scalar as an integer operand reads it
  bool scalarIsInt = false;
  std::vector<int64_t> strides;
};

bool isInt(DType t) { return t == DType::I64 || t == DType::Bool; }

class LogicKernel final : public OpKernel {
public:
  LogicKernel(Fn fn, std::vector<Arg> args, std::vector<int64_t> shape, DType out)
      : fn_(fn), args_(std::move(args)), shape_(std::move(shape)), out_(out) {
    // Rows in f32: operands f32 or bool, results f32 or bool, and scalars
    // a comparison would read exactly as f32 (then f32 and double agree).
    bool cmp = fn_ <= Fn::Not, sel = fn_ == Fn::Where || fn_ == Fn::MaskedFill;
    rows_ = (cmp || sel) && !shape_.empty() && (out_ == DType::F32 || out_ == DType::Bool);
    for (const Arg &a : args_)
      rows_ = rows_ && (a.input >= 0 ? a.dtype != DType::I64
                                     : !cmp || double(float(a.scalar)) == a.scalar);
  }

  void run(KernelInputs in, KernelOutputs out, ExecContext &) const override {
    if (rows_)
      return runRows(in, out);
    const size_t r = shape_.size(), k = args_.size();
    std::vector<const void *> base(k);
    for (size_t a = 0; a < k; ++a)
      base[a] = args_[a].input >= 0 ? in[args_[a].input]->raw() : nullptr;
    int64_t n = numElements(shape_);
    std::vector<int64_t> idx(r, 0), off(k, 0);
    void *y = out[0]->raw();
    for (int64_t o = 0; o < n; ++o) {
      double dv[3] = {0, 0, 0};
      int64_t iv[3] = {0, 0, 0};
      bool allInt = true;
      for (size_t a = 0; a < k; ++a) {
        const Arg &g = args_[a];
        if (g.input < 0) {
          dv[a] = g.scalar, iv[a] = g.scalarInt;
          allInt &= g.scalarIsInt;
          continue;
        }
        switch (g.dtype) {
        case DType::F32:
          dv[a] = static_cast<const float *>(base[a])[off[a]];
          allInt = false;
          break;
        case DType::I64:
          iv[a] = static_cast<const int64_t *>(base[a])[off[a]];
          dv[a] = double(iv[a]);
          break;
        default:
          iv[a] = static_cast<const uint8_t *>(base[a])[off[a]] != 0;
          dv[a] = double(iv[a]);
          break;
        }
      }
      apply(y, o, dv, iv, allInt);
      for (size_t d = r; d-- > 0;) {
        for (size_t a = 0; a < k; ++a)
          off[a] += args_[a].strides[d];
        if (++idx[d] < shape_[d])
          break;
        for (size_t a = 0; a < k; ++a)
          off[a] -= idx[d] * args_[a].strides[d];
        idx[d] = 0;
      }
    }
  }

private:
  /// Row by row of the innermost dim, in blocks of f32: an f32 operand
  /// read in place where contiguous, others (bool, broadcast, scalar)
  /// converted into the block first.
  void runRows(KernelInputs in, KernelOutputs out) const {
    constexpr int64_t kBlock = 1024;
    const size_t r = shape_.size(), k = args_.size();
    const int64_t inner = shape_.back(), n = numElements(shape_), rows = n / std::max<int64_t>(inner, 1);
    if (n == 0)
      return;
    parallelFor(rows, n >= 65536, [&](int64_t row) {
      float blocks[3][kBlock];
      int64_t off[3] = {0, 0, 0};
      for (int64_t q = row, d = int64_t(r) - 1; d-- > 0;) {
        int64_t i = q % shape_[size_t(d)];
        q /= shape_[size_t(d)];
        for (size_t a = 0; a < k; ++a)
          off[a] += i * args_[a].strides[size_t(d)];
      }
      for (int64_t j0 = 0; j0 < inner; j0 += kBlock) {
        const int64_t m = std::min(kBlock, inner - j0);
        const float *v[3] = {nullptr, nullptr, nullptr};
        for (size_t a = 0; a < k; ++a) {
          const Arg &g = args_[a];
          float *b = blocks[a];
          if (g.input < 0) {
            std::fill(b, b + m, float(g.scalar));
            v[a] = b;
            continue;
          }
          int64_t st = g.strides[r - 1], at = off[a] + j0 * st;
          if (g.dtype == DType::F32) {
            const float *x = in[size_t(g.input)]->data<float>() + at;
            if (st == 1) {
              v[a] = x;
              continue;
            }
            std::fill(b, b + m, *x);
          } else {
            const uint8_t *x = in[size_t(g.input)]->data<uint8_t>() + at;
            if (st == 1)
              for (int64_t j = 0; j < m; ++j)
                b[j] = x[j] != 0;
            else
              std::fill(b, b + m, float(*x != 0));
          }
          v[a] = b;
        }
        int64_t o = row * inner + j0;
        if (out_ == DType::Bool)
          applyRow(out[0]->data<uint8_t>() + o, v, m);
        else
          applyRow(out[0]->data<float>() + o, v, m);
      }
    });
  }

  template <class T> void applyRow(T *y, const float *const *v, int64_t m) const {
    const float *a = v[0], *b = v[1], *c = v[2];
    switch (fn_) {
    case Fn::Eq: for (int64_t j = 0; j < m; ++j) y[j] = T(a[j] == b[j]); return;
    case Fn::Ne: for (int64_t j = 0; j < m; ++j) y[j] = T(a[j] != b[j]); return;
    case Fn::Gt: for (int64_t j = 0; j < m; ++j) y[j] = T(a[j] > b[j]); return;
    case Fn::Ge: for (int64_t j = 0; j < m; ++j) y[j] = T(a[j] >= b[j]); return;
    case Fn::Lt: for (int64_t j = 0; j < m; ++j) y[j] = T(a[j] < b[j]); return;
    case Fn::Le: for (int64_t j = 0; j < m; ++j) y[j] = T(a[j] <= b[j]); return;
    case Fn::And: for (int64_t j = 0; j < m; ++j) y[j] = T((a[j] != 0) & (b[j] != 0)); return;
    case Fn::Or: for (int64_t j = 0; j < m; ++j) y[j] = T((a[j] != 0) | (b[j] != 0)); return;
    case Fn::Xor: for (int64_t j = 0; j < m; ++j) y[j] = T((a[j] != 0) != (b[j] != 0)); return;
    case Fn::Not: for (int64_t j = 0; j < m; ++j) y[j] = T(a[j] == 0); return;
    case Fn::Where: // condition, input, other
      for (int64_t j = 0; j < m; ++j)
        y[j] = asResult<T>(a[j] != 0 ? b[j] : c[j]);
      return;
    case Fn::MaskedFill: // input, mask, value
      for (int64_t j = 0; j < m; ++j)
        y[j] = asResult<T>(b[j] != 0 ? c[j] : a[j]);
      return;
    default:
      return;
    }
  }

  template <class T> static T asResult(float x) {
    if constexpr (std::is_same_v<T, uint8_t>)
      return x != 0;
    else
      return x;
  }

  void store(void *y, int64_t o, double d, int64_t i, bool asInt) const {
    switch (out_) {
    case DType::F32:
      static_cast<float *>(y)[o] = asInt ? float(i) : float(d);
      break;
    case DType::I64:
      static_cast<int64_t *>(y)[o] = asInt ? i : torchCast<int64_t>(d);
      break;
    default:
      static_cast<uint8_t *>(y)[o] = asInt ? i != 0 : d != 0;
      break;
    }
  }

  void apply(void *y, int64_t o, const double *d, const int64_t *i, bool allInt) const {
    bool b = false;
    switch (fn_) {
    case Fn::Eq:
      b = allInt ? i[0] == i[1] : d[0] == d[1];
      break;
    case Fn::Ne:
      b = allInt ? i[0] != i[1] : d[0] != d[1];
      break;
    case Fn::Gt:
      b = allInt ? i[0] > i[1] : d[0] > d[1];
      break;
    case Fn::Ge:
      b = allInt ? i[0] >= i[1] : d[0] >= d[1];
      break;
    case Fn::Lt:
      b = allInt ? i[0] < i[1] : d[0] < d[1];
      break;
    case Fn::Le:
      b = allInt ? i[0] <= i[1] : d[0] <= d[1];
      break;
    case Fn::And:
      b = (d[0] != 0) && (d[1] != 0);
      break;
    case Fn::Or:
      b = (d[0] != 0) || (d[1] != 0);
      break;
    case Fn::Xor:
      b = (d[0] != 0) != (d[1] != 0);
      break;
    case Fn::Not:
      b = d[0] == 0;
      break;
    case Fn::BitAnd:
      return store(y, o, 0, i[0] & i[1], true);
    case Fn::BitOr:
      return store(y, o, 0, i[0] | i[1], true);
    case Fn::BitXor:
      return store(y, o, 0, i[0] ^ i[1], true);
    case Fn::BitNot:
      return store(y, o, 0, out_ == DType::Bool ? !i[0] : ~i[0], true);
    case Fn::Shl:
      return store(y, o, 0, i[1] < 0 || i[1] >= 64 ? 0 : int64_t(uint64_t(i[0]) << i[1]), true);
    case Fn::Shr:
      return store(y, o, 0, i[1] < 0 || i[1] >= 64 ? (i[0] < 0 ? -1 : 0) : i[0] >> i[1], true);
    case Fn::Where: {
      int pick = d[0] != 0 ? 1 : 2;
      return store(y, o, d[pick], i[pick], isInt(out_));
    }
    case Fn::MaskedFill: {
      int pick = d[1] != 0 ? 2 : 0;
      return store(y, o, d[pick], i[pick], isInt(out_));
    }
    }
    store(y, o, 0, b, true);
  }

  Fn fn_;
  std::vector<Arg> args_;
  std::vector<int64_t> shape_;
  DType out_;
  bool rows_ = false; ///< runRows applies
};

/// Operands in order: positional ones, then the named ones in `names`;
/// a name missing as an operand may be a scalar attribute.
template <Fn F>
llvm::Expected<std::unique_ptr<OpKernel>> makeLogic(const CallNode &c, const KernelBuildContext &) {
  auto out = outputShape(c);
  if (!out)
    return out.takeError();
  DType outType = outputDType(c);
  if (outType != DType::F32 && outType != DType::I64 && outType != DType::Bool)
    return kernelError(c, "a result of type " + dtypeName(outType).str() + " is not supported");
  std::vector<const char *> names;
  switch (F) {
  case Fn::Not:
  case Fn::BitNot:
    names = {"input"};
    break;
  case Fn::Where:
    names = {"condition", "input", "other"};
    break;
  case Fn::MaskedFill:
    names = {"input", "mask", "value"};
    break;
  default:
    names = {"input", "other"};
    break;
  }
  std::vector<Arg> args;
  size_t nextPositional = 0;
  size_t numData = c.dataArgs().size();
  for (const char *name : names) {
    Arg a;
    int i = namedOperand(c, name);
    if (i < 0 && !(F == Fn::MaskedFill && std::string(name) == "value")) {
      // An unnamed operand in order, unless it is a scalar attribute.
      const AttrValue *v = c.attrs().find(name);
      if ((!v || v->isNone()) && nextPositional < numData) {
        while (nextPositional < numData) {
          bool named = false;
          for (const char *other : names)
            named |= namedOperand(c, other) == int(nextPositional);
          if (!named)
            break;
          ++nextPositional;
        }
        if (nextPositional < numData)
          i = int(nextPositional++);
      }
    }
    if (i >= 0) {
      a.input = i;
      a.dtype = operandDType(c, size_t(i));
      if (a.dtype != DType::F32 && a.dtype != DType::I64 && a.dtype != DType::Bool)
        return kernelError(c, "operand " + llvm::Twine(name) + " of type " +
                                  dtypeName(a.dtype).str() + " is not supported");
      auto s = inputShape(c, size_t(i));
      if (!s)
        return s.takeError();
      if (s->size() > out->size())
        return kernelError(c, "operand " + llvm::Twine(name) + " has more dims than the result");
      a.strides.assign(out->size(), 0);
      int64_t st = 1;
      for (size_t d = s->size(); d-- > 0;) {
        size_t od = out->size() - s->size() + d;
        if ((*s)[d] != 1 && (*s)[d] != (*out)[od])
          return kernelError(c, "operand " + llvm::Twine(name) + " " + shapeToString(*s) +
                                    " does not broadcast to " + shapeToString(*out));
        a.strides[od] = (*s)[d] == 1 ? 0 : st;
        st *= (*s)[d];
      }
    } else {
      const AttrValue *v = c.attrs().find(name);
      if (!v || !(v->isNumber() || v->isBool()))
        return kernelError(c, "missing " + llvm::Twine(name));
      a.scalar = v->isBool() ? double(v->getBool()) : v->getNumber();
      a.scalarIsInt = v->isInt() || v->isBool();
      // An integer result takes a float scalar truncated, as PyTorch does;
      // one it cannot hold (NaN, 1e300) type inference refuses.
      if ((F == Fn::Where || F == Fn::MaskedFill) && isInt(outType) && !a.scalarIsInt &&
          !scalarFits(a.scalar, outType))
        return kernelError(c, llvm::Twine(name) + " = " + attrToString(*v) + " cannot be " +
                                  "converted to " + dtypeName(outType) + " without overflow");
      a.scalarInt = v->isInt()    ? v->getInt()
                    : v->isBool() ? int64_t(v->getBool())
                                  : saturatingInt64(a.scalar);
      a.strides.assign(out->size(), 0);
    }
    args.push_back(std::move(a));
  }
  bool bitwise = F == Fn::BitAnd || F == Fn::BitOr || F == Fn::BitXor || F == Fn::BitNot ||
                 F == Fn::Shl || F == Fn::Shr;
  if (bitwise)
    for (const Arg &a : args)
      if ((a.input >= 0 && !isInt(a.dtype)) || (a.input < 0 && !a.scalarIsInt))
        return kernelError(c, "bitwise ops need integer or bool operands");
  return std::unique_ptr<OpKernel>(new LogicKernel(F, std::move(args), *out, outType));
}

KC_REGISTER_KERNEL_DTYPES(eq, "torch.eq", makeLogic<Fn::Eq>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(ne, "torch.ne", makeLogic<Fn::Ne>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(gt, "torch.gt", makeLogic<Fn::Gt>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(ge, "torch.ge", makeLogic<Fn::Ge>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(lt, "torch.lt", makeLogic<Fn::Lt>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(le, "torch.le", makeLogic<Fn::Le>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(logical_and, "torch.logical_and", makeLogic<Fn::And>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(logical_or, "torch.logical_or", makeLogic<Fn::Or>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(logical_xor, "torch.logical_xor", makeLogic<Fn::Xor>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(logical_not, "torch.logical_not", makeLogic<Fn::Not>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(bitwise_and, "torch.bitwise_and", makeLogic<Fn::BitAnd>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(bitwise_or, "torch.bitwise_or", makeLogic<Fn::BitOr>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(bitwise_xor, "torch.bitwise_xor", makeLogic<Fn::BitXor>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(bitwise_not, "torch.bitwise_not", makeLogic<Fn::BitNot>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(bitwise_left_shift, "torch.bitwise_left_shift", makeLogic<Fn::Shl>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(bitwise_right_shift, "torch.bitwise_right_shift", makeLogic<Fn::Shr>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(where, "torch.where", makeLogic<Fn::Where>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));
KC_REGISTER_KERNEL_DTYPES(masked_fill, "Tensor.masked_fill", makeLogic<Fn::MaskedFill>,
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}),
                          (DTypeSet{DType::F32, DType::I64, DType::Bool}));

} // namespace
} // namespace kc::rt
