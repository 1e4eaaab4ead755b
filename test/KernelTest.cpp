//===- KernelTest.cpp - Interpreter kernels against reference values -----===//
//
// Each test case builds a small module around one operator (kc text parsed
// with parseModule, or built in C++ where weights need data), infers its
// types (which also checks the output shapes written here against kc's own
// type rules), compiles and runs it, and compares every output element with
// a reference computed in this file by naive loops in double precision.
// Inputs are random from a fixed-seed std::mt19937.
//
// Tolerance, elementwise: |got - ref| <= 1e-5 + 1e-5 * |ref|.
//
//===----------------------------------------------------------------------===//
#include "FuseOps.h"

#include "kc/IR/Expr.h"
#include "kc/IR/Module.h"
#include "kc/IR/Parser.h"
#include "kc/IR/TypeInference.h"
#include "kc/Pass/PassManager.h"
#include "kc/Runtime/Interpreter.h"
#include "kc/Runtime/KernelIsa.h"

#include "EmulatedAvx512.h"
#include "ScopedThreadCount.h"

#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace kc;

namespace {

/// |got - ref| <= kAtol + kRtol * |ref|, elementwise.
constexpr double kAtol = 1e-5, kRtol = 1e-5;

using Dims = std::vector<int64_t>;

int64_t count(const Dims &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::string dimsText(const Dims &s) {
  std::string r = "f32[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

/// Row-major flat index of `idx` in `shape`.
int64_t flat(const Dims &shape, const Dims &idx) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    f = f * shape[i] + idx[i];
  return f;
}

/// The multi-index of flat position `f` in `shape`.
Dims unflat(const Dims &shape, int64_t f) {
  Dims idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = f % shape[i];
    f /= shape[i];
  }
  return idx;
}

std::vector<float> uniform(std::mt19937 &rng, int64_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = d(rng);
  return v;
}

rt::Tensor tensorOf(const Dims &shape, const std::vector<float> &v) {
  rt::Tensor t = rt::Tensor::empty(DType::F32, shape);
  REQUIRE(size_t(t.numel()) == v.size());
  std::memcpy(t.raw(), v.data(), v.size() * sizeof(float));
  return t;
}

/// Parses kc text and infers its types; fails the test on any error.
ModulePtr parseTyped(const std::string &text) {
  auto m = parseModule(text, "kernel-test");
  if (!m)
    FAIL("parse error: " << llvm::toString(m.takeError()) << "\n" << text);
  if (llvm::Error e = inferTypes(**m))
    FAIL("type error: " << llvm::toString(std::move(e)) << "\n" << text);
  return *m;
}

/// Infers types of a module built in C++; fails the test on any error.
void inferOrFail(Module &m) {
  if (llvm::Error e = inferTypes(m))
    FAIL("type error: " << llvm::toString(std::move(e)));
}

std::vector<rt::Tensor> runModule(const Module &m, const std::vector<rt::Tensor> &inputs,
                                  const rt::CompileOptions &opts = {}) {
  auto cm = rt::CompiledModel::compile(m, opts);
  if (!cm)
    FAIL("compile error: " << llvm::toString(cm.takeError()));
  auto out = (*cm)->run(inputs);
  if (!out)
    FAIL("run error: " << llvm::toString(out.takeError()));
  return std::move(*out);
}

/// One output against its reference: shape, then every element.
void expectClose(const rt::Tensor &got, const Dims &shape, const std::vector<double> &ref,
                 const std::string &what, double atol = kAtol, double rtol = kRtol) {
  INFO(what);
  REQUIRE(got.dtype() == DType::F32);
  REQUIRE(Dims(got.shape().begin(), got.shape().end()) == shape);
  REQUIRE(size_t(got.numel()) == ref.size());
  const float *g = got.data<float>();
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double err = std::fabs(double(g[i]) - ref[i]);
    bool ok = err <= atol + rtol * std::fabs(ref[i]);
    if (!ok) {
      if (first < 0)
        first = int64_t(i);
      ++bad;
    }
    if (!(err <= worst))
      worst = err;
  }
  std::ostringstream msg;
  if (bad) {
    Dims idx = unflat(shape, first);
    msg << bad << " of " << ref.size() << " elements differ (worst |err| " << worst
        << "); first at [";
    for (size_t i = 0; i < idx.size(); ++i)
      msg << (i ? "," : "") << idx[i];
    msg << "]: got " << g[first] << ", expected " << ref[size_t(first)];
  }
  CHECK_MESSAGE(bad == 0, msg.str());
}

/// Runs one compiled model twice on one input and checks its first output
/// both times: state a kernel keeps between runs (scratch planes, weights
/// packed on the first run, the originals let go) must not change the
/// result.
void expectCloseTwice(const Module &m, const rt::Tensor &input, const Dims &shape,
                      const std::vector<double> &ref, const std::string &what,
                      const rt::CompileOptions &opts = {}, double atol = kAtol,
                      double rtol = kRtol) {
  auto cm = rt::CompiledModel::compile(m, opts);
  if (!cm)
    FAIL("compile error: " << llvm::toString(cm.takeError()));
  for (int run = 0; run < 2; ++run) {
    auto got = (*cm)->run({input});
    if (!got)
      FAIL("run error: " << llvm::toString(got.takeError()));
    expectClose((*got)[0], shape, ref, what + (run ? " (second run)" : ""), atol, rtol);
  }
}

/// A module whose main applies one call (given as text) to f32 parameters.
std::string oneOpText(const std::vector<std::pair<std::string, Dims>> &params,
                      const std::string &callText, const Dims &out) {
  std::string s = "fn @main(";
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? ", %" : "%") + params[i].first + ": " + dimsText(params[i].second);
  s += ") -> " + dimsText(out) + " {\n  %0 = " + callText + " : " + dimsText(out) +
       "\n  return %0\n}\n";
  return s;
}

/// Runs one single-input op given as text and returns its output.
rt::Tensor runOneOp(const Dims &in, const std::vector<float> &x, const std::string &callText,
                    const Dims &out) {
  ModulePtr m = parseTyped(oneOpText({{"x", in}}, callText, out));
  auto r = runModule(*m, {tensorOf(in, x)});
  REQUIRE(r.size() == 1);
  return r[0];
}

/// Reference for gather-like ops: output element i is x[src(index of i)],
/// or `fill` where src returns nullopt.
std::vector<double> gather(const Dims &in, const std::vector<float> &x, const Dims &out,
                           const std::function<std::optional<Dims>(const Dims &)> &src,
                           double fill = 0) {
  std::vector<double> r(size_t(count(out)));
  for (int64_t o = 0; o < count(out); ++o) {
    auto s = src(unflat(out, o));
    r[size_t(o)] = s ? double(x[size_t(flat(in, *s))]) : fill;
  }
  return r;
}

struct WeightArg {
  std::string key;
  Dims shape;
  std::vector<float> data;
};

/// An f32 constant of `shape` holding `v`, as a weight the importer reads.
Expr floatConstant(const std::string &name, const Dims &shape, const std::vector<float> &v) {
  REQUIRE(size_t(count(shape)) == v.size());
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return Expr(
      tensorConstant(name, tensorType(DType::F32, shape), TensorData::owned(std::move(bytes))));
}

/// main(%x) = op(%x, weights...) built in C++ so the weights carry data,
/// arguments laid out as the importer does (data first, then weights).
ModulePtr weightedOp(const std::string &op, const Dims &in, Attrs attrs,
                     const std::vector<WeightArg> &weights, const Dims &out) {
  Var x = var("x", tensorType(DType::F32, in));
  std::vector<Expr> args{x};
  std::vector<ArgKey> keys{ArgKey{}};
  for (const WeightArg &w : weights) {
    args.push_back(floatConstant("op." + w.key, w.shape, w.data));
    keys.push_back({ArgRole::Weight, w.key});
  }
  Call c = call(op, args, std::move(attrs), keys, "op");
  Type outT = tensorType(DType::F32, out);
  c->setType(outT);
  auto m = std::make_shared<Module>();
  m->add(make<const FunctionNode>("main", std::vector<Var>{x}, Expr(c), outT, false));
  inferOrFail(*m);
  return m;
}

AttrValue ints(std::vector<int64_t> v) { return AttrValue::intList(std::move(v)); }
AttrValue i64(int64_t v) { return AttrValue::integer(v); }
AttrValue flag(bool b) { return AttrValue::boolean(b); }

} // namespace

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
/// Reference reduction: every input element accumulates into the output
/// position that drops the reduced dims.
std::vector<double> reduceRef(const std::string &op, const Dims &in, const std::vector<float> &x,
                              const std::vector<bool> &red) {
  Dims kept;
  for (size_t d = 0; d < in.size(); ++d)
    if (!red[d])
      kept.push_back(in[d]);
  int64_t n = count(kept);
  double init = op == "torch.prod"   ? 1.0
                : op == "torch.amax" ? -std::numeric_limits<double>::infinity()
                : op == "torch.amin" ? std::numeric_limits<double>::infinity()
                                     : 0.0;
  std::vector<double> acc(size_t(n), init);
  std::vector<int64_t> cnt(size_t(n), 0);
  for (int64_t i = 0; i < count(in); ++i) {
    Dims idx = unflat(in, i), k;
    for (size_t d = 0; d < in.size(); ++d)
      if (!red[d])
        k.push_back(idx[d]);
    size_t o = size_t(flat(kept, k));
    double v = x[size_t(i)];
    if (op == "torch.prod")
      acc[o] *= v;
    else if (op == "torch.amax")
      acc[o] = std::max(acc[o], v);
    else if (op == "torch.amin")
      acc[o] = std::min(acc[o], v);
    else
      acc[o] += v;
    ++cnt[o];
  }
  if (op == "torch.mean")
    for (size_t o = 0; o < acc.size(); ++o)
      acc[o] /= double(cnt[o]);
  return acc;
}
} // namespace

// Values an expression uses twice are computed once, kept in a slot and
// loaded again (lower-rpn's =$i and $i): over blocks and a tail (1100
// columns, blocks of 512), with a broadcast operand, from the AST and from
// the lowered program text.
TEST_CASE("kernel: an expression that reuses values") {
  const std::string text = R"(
fn @e(%a: f32[2,1100], %b: f32[1100]) -> f32[2,1100] primitive {
  %0 = add(%a, %b) : f32[2,1100]
  %1 = sin(%0) : f32[2,1100]
  %2 = mul(%0, %1) : f32[2,1100]
  %3 = sub(%2, %1) : f32[2,1100]
  %4 = mul(%3, %3) : f32[2,1100]
  return %4
}
fn @main(%a: f32[2,1100], %b: f32[1100]) -> f32[2,1100] {
  %0 = @e(%a, %b) : f32[2,1100]
  return %0
}
)";
  std::mt19937 rng(17);
  std::vector<float> a = uniform(rng, 2200, -3.f, 3.f), b = uniform(rng, 1100, -3.f, 3.f);
  std::vector<double> ref(2200);
  for (int64_t i = 0; i < 2200; ++i) {
    double v = double(a[size_t(i)]) + double(b[size_t(i % 1100)]), sv = std::sin(v);
    ref[size_t(i)] = (v * sv - sv) * (v * sv - sv);
  }
  for (bool lowered : {false, true}) {
    CAPTURE(lowered);
    ModulePtr m = parseTyped(text);
    if (lowered) {
      PassManager pm;
      REQUIRE(!pm.addPipeline("lower-rpn"));
      REQUIRE(!pm.run(*m));
      const auto *body = llvm::cast<CallNode>(m->lookup("e")->body().get());
      auto program = body->attrs().find("program")->getStringList();
      CHECK(std::vector<std::string>(program.begin(), program.end()) ==
            std::vector<std::string>{"%0", "%1", "add", "=$0", "$0", "sin", "=$1", "mul", "$1",
                                     "sub", "=$2", "$2", "mul"});
    }
    auto out = runModule(*m, {tensorOf({2, 1100}, a), tensorOf({1100}, b)});
    expectClose(out[0], {2, 1100}, ref, "reused values");
  }
}

TEST_CASE("kernel: reductions mean/sum/prod/amax/amin") {
  std::mt19937 rng(101);
  const Dims in{2, 3, 4, 5};
  // Values near 1 keep products well scaled.
  auto x = uniform(rng, count(in), 0.6f, 1.4f);
  struct Case {
    std::string op, attrs;
    std::vector<int> reduced; ///< normalized dims; empty = all
    Dims out;
  };
  const std::vector<Case> cases = {
      {"torch.mean", "{dim=[1], keepdim=false}", {1}, {2, 4, 5}},
      {"torch.sum", "{dim=[1,3], keepdim=true}", {1, 3}, {2, 1, 4, 1}},
      {"torch.amax", "{dim=[-1], keepdim=false}", {3}, {2, 3, 4}},
      {"torch.amin", "{dim=[-3,-1], keepdim=true}", {1, 3}, {2, 1, 4, 1}},
      {"torch.prod", "{dim=2, keepdim=false}", {2}, {2, 3, 5}},
      {"torch.prod", "{dim=[-4], keepdim=true}", {0}, {1, 3, 4, 5}},
      {"torch.sum", "{dim=[0,2], keepdim=false}", {0, 2}, {3, 5}},
      {"torch.mean", "{dim=[-2,0], keepdim=true}", {0, 2}, {1, 3, 1, 5}},
      {"torch.amax", "{dim=[0,1,2,3], keepdim=true}", {0, 1, 2, 3}, {1, 1, 1, 1}},
      {"torch.amin", "{dim=[3,2,1], keepdim=false}", {1, 2, 3}, {2}},
      {"torch.mean", "{keepdim=false}", {}, {}},
      {"torch.sum", "", {}, {}},
      {"torch.amax", "{dim=none, keepdim=false}", {}, {}},
      {"torch.amin", "", {}, {}},
  };
  for (const Case &c : cases) {
    std::string text = c.op + "(%x)" + (c.attrs.empty() ? "" : " " + c.attrs);
    CAPTURE(text);
    std::vector<bool> red(in.size(), c.reduced.empty());
    for (int d : c.reduced)
      red[size_t(d)] = true;
    rt::Tensor got = runOneOp(in, x, text, c.out);
    expectClose(got, c.out, reduceRef(c.op, in, x, red), text);
  }
}

TEST_CASE("kernel: reductions over an empty dim list reduce every dim") {
  // PyTorch's sum/mean(dim=[]) reduce everything, and so does kc's type rule;
  // the kernel once reduced nothing here and wrote the whole input into the
  // one-element result (heap corruption).
  std::mt19937 rng(102);
  const Dims in{2, 3, 4, 5};
  auto x = uniform(rng, count(in));
  const std::vector<bool> all(in.size(), true);
  expectClose(runOneOp(in, x, "torch.sum(%x) {dim=[], keepdim=false}", {}), {},
              reduceRef("torch.sum", in, x, all), "sum dim=[]");
  expectClose(runOneOp(in, x, "torch.mean(%x) {dim=[], keepdim=true}", {1, 1, 1, 1}),
              {1, 1, 1, 1}, reduceRef("torch.mean", in, x, all), "mean dim=[] keepdim");
}

//===----------------------------------------------------------------------===//
// Slicing
//===----------------------------------------------------------------------===//

TEST_CASE("kernel: Tensor.slice (both forms) and Tensor.select") {
  std::mt19937 rng(202);
  const Dims in{4, 6, 5};
  auto x = uniform(rng, count(in));
  struct Case {
    std::string call;
    Dims out;
    std::function<std::optional<Dims>(const Dims &)> src;
  };
  const std::vector<Case> cases = {
      // x[:, -4::2]
      {"Tensor.slice(%x) {dim=1, start=-4, end=2147483647, step=2}",
       {4, 2, 5},
       [](const Dims &o) { return Dims{o[0], 2 + 2 * o[1], o[2]}; }},
      // x[:, :, 1:-1]
      {"Tensor.slice(%x) {dim=2, start=1, end=-1, step=1}",
       {4, 6, 3},
       [](const Dims &o) { return Dims{o[0], o[1], 1 + o[2]}; }},
      // x[1:4:2]
      {"Tensor.slice(%x) {dim=0, start=1, end=4, step=2}",
       {2, 6, 5},
       [](const Dims &o) { return Dims{1 + 2 * o[0], o[1], o[2]}; }},
      // x[..., -10:3]: the start clamps to 0
      {"Tensor.slice(%x) {dim=-1, start=-10, end=3, step=1}",
       {4, 6, 3},
       [](const Dims &o) { return Dims{o[0], o[1], o[2]}; }},
      // x[:, 5:] with step 3: one element
      {"Tensor.slice(%x) {dim=1, start=5, end=2147483647, step=3}",
       {4, 1, 5},
       [](const Dims &o) { return Dims{o[0], 5, o[2]}; }},
      // x[1:3, :, -3::2]
      {"Tensor.slice(%x) {dims=[0,2], starts=[1,-3], ends=[3,2147483647], steps=[1,2]}",
       {2, 6, 2},
       [](const Dims &o) { return Dims{1 + o[0], o[1], 2 + 2 * o[2]}; }},
      // x[:, 1:5:2, 0:4:3], dims given out of order and negative
      {"Tensor.slice(%x) {dims=[-1,1], starts=[0,1], ends=[4,5], steps=[3,2]}",
       {4, 2, 2},
       [](const Dims &o) { return Dims{o[0], 1 + 2 * o[1], 3 * o[2]}; }},
      // x[-2]
      {"Tensor.select(%x) {dim=0, index=-2}",
       {6, 5},
       [](const Dims &o) { return Dims{2, o[0], o[1]}; }},
      // x[:, 4]
      {"Tensor.select(%x) {dim=1, index=-2}",
       {4, 5},
       [](const Dims &o) { return Dims{o[0], 4, o[1]}; }},
      // x[..., 3]
      {"Tensor.select(%x) {dim=-1, index=3}",
       {4, 6},
       [](const Dims &o) { return Dims{o[0], o[1], 3}; }},
  };
  for (const Case &c : cases) {
    CAPTURE(c.call);
    rt::Tensor got = runOneOp(in, x, c.call, c.out);
    expectClose(got, c.out, gather(in, x, c.out, c.src), c.call);
  }
}

TEST_CASE("kernel: Tensor.slice with selects (x[1:, 3])") {
  std::mt19937 rng(203);
  const Dims in{4, 6, 5};
  auto x = uniform(rng, count(in));
  std::string call = "Tensor.slice(%x) {dims=[0,1], starts=[1,0], ends=[2147483647,0], "
                     "steps=[1,1], selects=[2147483647,3]}";
  const Dims out{3, 5};
  rt::Tensor got = runOneOp(in, x, call, out);
  expectClose(got, out,
              gather(in, x, out, [](const Dims &o) { return Dims{1 + o[0], 3, o[1]}; }), call);
}

//===----------------------------------------------------------------------===//
// Multi-output splits
//===----------------------------------------------------------------------===//

namespace {
/// main(%x) = (op(%x).0, op(%x).1, ...) built with tupleGetItem and a Tuple.
ModulePtr splitModule(const std::string &op, const Dims &in, Attrs attrs,
                      const std::vector<Dims> &outs) {
  Var x = var("x", tensorType(DType::F32, in));
  Call c = call(op, {Expr(x)}, std::move(attrs), {}, "split");
  std::vector<Type> fields;
  for (const Dims &o : outs)
    fields.push_back(tensorType(DType::F32, o));
  Type tt = tupleType(fields);
  c->setType(tt);
  std::vector<Expr> items;
  for (size_t i = 0; i < outs.size(); ++i) {
    TupleGetItem g = tupleGetItem(c, unsigned(i));
    g->setType(fields[i]);
    items.push_back(g);
  }
  Tuple body = tuple(items);
  body->setType(tt);
  auto m = std::make_shared<Module>();
  m->add(make<const FunctionNode>("main", std::vector<Var>{x}, Expr(body), tt, false));
  inferOrFail(*m);
  return m;
}
} // namespace

TEST_CASE("kernel: torch.chunk/split/unbind/tensor_split") {
  std::mt19937 rng(303);
  const Dims in{3, 7, 2};
  auto x = uniform(rng, count(in));
  struct Case {
    std::string name, op;
    Attrs attrs;
    int dim;                                       ///< normalized
    std::vector<std::pair<int64_t, int64_t>> ranges; ///< [start, end) along dim
    bool drop;                                     ///< unbind: the dim is removed
  };
  const std::vector<Case> cases = {
      {"chunk 3 dim 1", "torch.chunk", {{"chunks", i64(3)}, {"dim", i64(1)}}, 1,
       {{0, 3}, {3, 6}, {6, 7}}, false},
      {"chunk 2 dim -1", "torch.chunk", {{"chunks", i64(2)}, {"dim", i64(-1)}}, 2,
       {{0, 1}, {1, 2}}, false},
      {"chunk 4 dim 0 (3 pieces)", "torch.chunk", {{"chunks", i64(4)}, {"dim", i64(0)}}, 0,
       {{0, 1}, {1, 2}, {2, 3}}, false},
      {"split [2,5] dim 1", "torch.split",
       {{"split_size_or_sections", ints({2, 5})}, {"dim", i64(1)}}, 1, {{0, 2}, {2, 7}}, false},
      {"split 3 dim -2", "torch.split", {{"split_size_or_sections", i64(3)}, {"dim", i64(-2)}},
       1, {{0, 3}, {3, 6}, {6, 7}}, false},
      {"unbind dim 0", "torch.unbind", {{"dim", i64(0)}}, 0, {{0, 1}, {1, 2}, {2, 3}}, true},
      {"unbind dim -1", "torch.unbind", {{"dim", i64(-1)}}, 2, {{0, 1}, {1, 2}}, true},
      {"tensor_split indices [2,5] dim 1", "torch.tensor_split",
       {{"indices", ints({2, 5})}, {"dim", i64(1)}}, 1, {{0, 2}, {2, 5}, {5, 7}}, false},
      {"tensor_split sections 3 dim 1", "torch.tensor_split",
       {{"sections", i64(3)}, {"dim", i64(1)}}, 1, {{0, 3}, {3, 5}, {5, 7}}, false},
      {"tensor_split indices [-2] dim 0", "torch.tensor_split",
       {{"indices", ints({-2})}, {"dim", i64(0)}}, 0, {{0, 1}, {1, 3}}, false},
  };
  for (const Case &c : cases) {
    CAPTURE(c.name);
    std::vector<Dims> outs;
    for (auto [s, e] : c.ranges) {
      Dims o = in;
      if (c.drop)
        o.erase(o.begin() + c.dim);
      else
        o[size_t(c.dim)] = e - s;
      outs.push_back(o);
    }
    ModulePtr m = splitModule(c.op, in, c.attrs, outs);
    auto got = runModule(*m, {tensorOf(in, x)});
    REQUIRE(got.size() == outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      int64_t start = c.ranges[i].first;
      auto ref = gather(in, x, outs[i], [&](const Dims &o) {
        Dims s = o;
        if (c.drop)
          s.insert(s.begin() + c.dim, start);
        else
          s[size_t(c.dim)] += start;
        return std::optional<Dims>(s);
      });
      expectClose(got[i], outs[i], ref, c.name + " piece " + std::to_string(i));
    }
  }
}

//===----------------------------------------------------------------------===//
// Padding and clamping
//===----------------------------------------------------------------------===//

TEST_CASE("kernel: F.pad constant/reflect/replicate") {
  std::mt19937 rng(404);
  const Dims in{2, 3, 4, 5};
  auto x = uniform(rng, count(in));
  // The pad list holds (before, after) pairs from the last dim backwards.
  struct Case {
    std::string call;
    std::vector<int64_t> pad;
    std::string mode;
  };
  const std::vector<Case> cases = {
      {"F.pad(%x) {mode=\"constant\", pad=[1,2,2,1], value=1.5}", {1, 2, 2, 1}, "constant"},
      {"F.pad(%x) {mode=\"constant\", pad=[1,1,0,0,1,0], value=1.5}", {1, 1, 0, 0, 1, 0},
       "constant"},
      {"F.pad(%x) {mode=\"reflect\", pad=[2,1,1,3]}", {2, 1, 1, 3}, "reflect"},
      {"F.pad(%x) {mode=\"replicate\", pad=[3,0,0,2]}", {3, 0, 0, 2}, "replicate"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.call);
    Dims out = in, before(in.size(), 0);
    for (size_t i = 0; i < c.pad.size() / 2; ++i) {
      size_t d = in.size() - 1 - i;
      before[d] = c.pad[2 * i];
      out[d] += c.pad[2 * i] + c.pad[2 * i + 1];
    }
    auto ref = gather(
        in, x, out,
        [&](const Dims &o) -> std::optional<Dims> {
          Dims s(in.size());
          for (size_t d = 0; d < in.size(); ++d) {
            int64_t i = o[d] - before[d], n = in[d];
            if (i < 0 || i >= n) {
              if (c.mode == "constant")
                return std::nullopt;
              if (c.mode == "reflect") // mirror without repeating the edge
                i = i < 0 ? -i : 2 * (n - 1) - i;
              else
                i = i < 0 ? 0 : n - 1;
            }
            s[d] = i;
          }
          return s;
        },
        1.5);
    expectClose(runOneOp(in, x, c.call, out), out, ref, c.call);
  }
}

TEST_CASE("kernel: torch.clamp min only, max only, both") {
  std::mt19937 rng(505);
  const Dims in{3, 4, 5};
  auto x = uniform(rng, count(in), -2.f, 2.f);
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::string call;
    double lo, hi;
  };
  const std::vector<Case> cases = {
      {"torch.clamp(%x) {min=-0.5}", -0.5, inf},
      {"torch.clamp(%x) {max=0.75}", -inf, 0.75},
      {"torch.clamp(%x) {max=0.25, min=-1.0}", -1.0, 0.25},
      {"torch.clamp(%x) {max=none, min=0}", 0.0, inf},
      {"torch.clamp(%x) {max=1, min=none}", -inf, 1.0},
  };
  for (const Case &c : cases) {
    CAPTURE(c.call);
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      double v = x[i];
      if (v < c.lo)
        v = c.lo;
      if (v > c.hi)
        v = c.hi;
      ref[i] = v;
    }
    expectClose(runOneOp(in, x, c.call, in), in, ref, c.call);
  }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_CASE("kernel: torch.stack and torch.cat") {
  std::mt19937 rng(606);
  const Dims s3{2, 3, 4};
  auto a = uniform(rng, 24), b = uniform(rng, 24), c = uniform(rng, 24);
  const std::vector<const std::vector<float> *> abc{&a, &b, &c};
  auto runMulti = [&](const std::vector<std::pair<std::string, Dims>> &params,
                      const std::vector<std::vector<float>> &data, const std::string &call,
                      const Dims &out) {
    ModulePtr m = parseTyped(oneOpText(params, call, out));
    std::vector<rt::Tensor> ins;
    for (size_t i = 0; i < params.size(); ++i)
      ins.push_back(tensorOf(params[i].second, data[i]));
    auto r = runModule(*m, ins);
    REQUIRE(r.size() == 1);
    return r[0];
  };
  SUBCASE("stack dim 1") {
    Dims out{2, 3, 3, 4};
    std::vector<double> ref(size_t(count(out)));
    for (int64_t o = 0; o < count(out); ++o) {
      Dims i = unflat(out, o);
      ref[size_t(o)] = (*abc[size_t(i[1])])[size_t(flat(s3, {i[0], i[2], i[3]}))];
    }
    auto got = runMulti({{"a", s3}, {"b", s3}, {"c", s3}}, {a, b, c},
                        "torch.stack(%a, %b, %c) {dim=1}", out);
    expectClose(got, out, ref, "stack dim 1");
  }
  SUBCASE("stack dim -1") {
    Dims out{2, 3, 4, 3};
    std::vector<double> ref(size_t(count(out)));
    for (int64_t o = 0; o < count(out); ++o) {
      Dims i = unflat(out, o);
      ref[size_t(o)] = (*abc[size_t(i[3])])[size_t(flat(s3, {i[0], i[1], i[2]}))];
    }
    auto got = runMulti({{"a", s3}, {"b", s3}, {"c", s3}}, {a, b, c},
                        "torch.stack(%a, %b, %c) {dim=-1}", out);
    expectClose(got, out, ref, "stack dim -1");
  }
  SUBCASE("cat dim 0") {
    Dims sd{1, 3, 4}, out{3, 3, 4};
    auto d = uniform(rng, count(sd));
    std::vector<double> ref(size_t(count(out)));
    for (int64_t o = 0; o < count(out); ++o) {
      Dims i = unflat(out, o);
      ref[size_t(o)] = i[0] < 2 ? a[size_t(flat(s3, i))]
                                : d[size_t(flat(sd, {i[0] - 2, i[1], i[2]}))];
    }
    auto got = runMulti({{"a", s3}, {"d", sd}}, {a, d}, "torch.cat(%a, %d) {dim=0}", out);
    expectClose(got, out, ref, "cat dim 0");
  }
  SUBCASE("cat dim -1, three operands") {
    Dims sd{2, 3, 2}, out{2, 3, 10};
    auto d = uniform(rng, count(sd));
    std::vector<double> ref(size_t(count(out)));
    for (int64_t o = 0; o < count(out); ++o) {
      Dims i = unflat(out, o);
      int64_t k = i[2];
      ref[size_t(o)] = k < 4   ? a[size_t(flat(s3, {i[0], i[1], k}))]
                       : k < 6 ? d[size_t(flat(sd, {i[0], i[1], k - 4}))]
                               : b[size_t(flat(s3, {i[0], i[1], k - 6}))];
    }
    auto got = runMulti({{"a", s3}, {"d", sd}, {"b", s3}}, {a, d, b},
                        "torch.cat(%a, %d, %b) {dim=-1}", out);
    expectClose(got, out, ref, "cat dim -1");
  }
}

TEST_CASE("kernel: squeeze, unsqueeze, permute, transpose, expand") {
  std::mt19937 rng(707);
  struct Case {
    std::string call;
    Dims in, out;
    std::function<std::optional<Dims>(const Dims &)> src;
  };
  // One case a line: call, input shape, output shape, source index.
  // clang-format off
  const std::vector<Case> cases = {
      {"torch.squeeze(%x) {dim=1}", {2, 1, 3, 1}, {2, 3, 1},
       [](const Dims &o) { return Dims{o[0], 0, o[1], o[2]}; }},
      {"torch.squeeze(%x) {dim=-1}", {2, 1, 3, 1}, {2, 1, 3},
       [](const Dims &o) { return Dims{o[0], o[1], o[2], 0}; }},
      {"torch.squeeze(%x)", {2, 1, 3, 1}, {2, 3},
       [](const Dims &o) { return Dims{o[0], 0, o[1], 0}; }},
      {"torch.unsqueeze(%x) {dim=-1}", {2, 3}, {2, 3, 1},
       [](const Dims &o) { return Dims{o[0], o[1]}; }},
      {"torch.unsqueeze(%x) {dim=1}", {2, 3}, {2, 1, 3},
       [](const Dims &o) { return Dims{o[0], o[2]}; }},
      // out[a,b,c,d] = x[b,d,a,c]: out dim i is input dim dims[i]
      {"Tensor.permute(%x) {dims=[2,0,3,1]}", {2, 3, 4, 5}, {4, 2, 5, 3},
       [](const Dims &o) { return Dims{o[1], o[3], o[0], o[2]}; }},
      {"Tensor.permute(%x) {dims=[0,-1,1,-2]}", {2, 3, 4, 5}, {2, 5, 3, 4},
       [](const Dims &o) { return Dims{o[0], o[2], o[3], o[1]}; }},
      {"torch.transpose(%x) {dim0=1, dim1=-1}", {2, 3, 4, 5}, {2, 5, 4, 3},
       [](const Dims &o) { return Dims{o[0], o[3], o[2], o[1]}; }},
      {"torch.transpose(%x) {dim0=0, dim1=1}", {6, 7}, {7, 6},
       [](const Dims &o) { return Dims{o[1], o[0]}; }},
      // Transposed by tiles of 16 (the output's innermost dim strided in
      // the input, another contiguous there): channels-last to -first and
      // back with partial tiles, and the contiguous dim apart from the
      // innermost one.
      {"Tensor.permute(%x) {dims=[0,3,1,2]}", {1, 13, 17, 35}, {1, 35, 13, 17},
       [](const Dims &o) { return Dims{o[0], o[2], o[3], o[1]}; }},
      {"Tensor.permute(%x) {dims=[0,2,3,1]}", {2, 35, 6, 17}, {2, 6, 17, 35},
       [](const Dims &o) { return Dims{o[0], o[3], o[1], o[2]}; }},
      {"Tensor.permute(%x) {dims=[2,1,0]}", {20, 3, 18}, {18, 3, 20},
       [](const Dims &o) { return Dims{o[2], o[1], o[0]}; }},
      {"Tensor.expand(%x) {sizes=[2,3,5,4]}", {3, 1, 4}, {2, 3, 5, 4},
       [](const Dims &o) { return Dims{o[1], 0, o[3]}; }},
      {"Tensor.expand(%x) {sizes=[2,-1,5,-1]}", {3, 1, 4}, {2, 3, 5, 4},
       [](const Dims &o) { return Dims{o[1], 0, o[3]}; }},
      {"Tensor.expand(%x) {sizes=[3,4,2]}", {1, 4, 1}, {3, 4, 2},
       [](const Dims &o) { return Dims{0, o[1], 0}; }},
  };
  // clang-format on
  for (const Case &c : cases) {
    CAPTURE(c.call);
    auto x = uniform(rng, count(c.in));
    expectClose(runOneOp(c.in, x, c.call, c.out), c.out, gather(c.in, x, c.out, c.src), c.call);
  }
}

TEST_CASE("kernel: views feeding copies (unsqueeze -> expand -> permute)") {
  std::mt19937 rng(708);
  const Dims in{2, 3};
  auto x = uniform(rng, 6);
  ModulePtr m = parseTyped(R"(fn @main(%x: f32[2,3]) -> f32[4,3,2] {
  %0 = torch.unsqueeze(%x) {dim=0} : f32[1,2,3]
  %1 = Tensor.expand(%0) {sizes=[4,2,3]} : f32[4,2,3]
  %2 = Tensor.permute(%1) {dims=[0,2,1]} : f32[4,3,2]
  return %2
}
)");
  auto got = runModule(*m, {tensorOf(in, x)});
  Dims out{4, 3, 2};
  expectClose(got[0], out,
              gather(in, x, out, [](const Dims &o) { return Dims{o[2], o[1]}; }), "chain");
}

TEST_CASE("kernel: channel shuffle (reshape -> permute -> reshape)") {
  std::mt19937 rng(808);
  const int64_t N = 2, C = 6, H = 3, W = 4, g = 3;
  const Dims in{N, C, H, W};
  auto x = uniform(rng, count(in));
  ModulePtr m = parseTyped(R"(fn @main(%x: f32[2,6,3,4]) -> f32[2,6,3,4] {
  %0 = Tensor.reshape(%x) {shape=[2,3,2,3,4]} : f32[2,3,2,3,4]
  %1 = Tensor.permute(%0) {dims=[0,2,1,3,4]} : f32[2,2,3,3,4]
  %2 = Tensor.reshape(%1) {shape=[2,6,3,4]} : f32[2,6,3,4]
  return %2
}
)");
  // Group a's channel b (input channel a*C/g + b) becomes channel b*g + a.
  std::vector<double> ref(size_t(count(in)));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t a = 0; a < g; ++a)
      for (int64_t b = 0; b < C / g; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w)
            ref[size_t(flat(in, {n, b * g + a, h, w}))] = x[size_t(flat(in, {n, a * (C / g) + b, h, w}))];
  auto got = runModule(*m, {tensorOf(in, x)});
  expectClose(got[0], in, ref, "channel shuffle");
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

namespace {
/// Adaptive pooling reference: output i covers [floor(i*in/out), ceil((i+1)*in/out)).
std::vector<double> adaptiveRef(const Dims &in, const std::vector<float> &x, int64_t OH,
                                int64_t OW, bool isMax) {
  int64_t P = in[0] * in[1], H = in[2], W = in[3];
  std::vector<double> r;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        auto h0 = int64_t(std::floor(double(oh) * H / OH));
        auto h1 = int64_t(std::ceil(double(oh + 1) * H / OH));
        auto w0 = int64_t(std::floor(double(ow) * W / OW));
        auto w1 = int64_t(std::ceil(double(ow + 1) * W / OW));
        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) {
            double v = x[size_t((p * H + h) * W + w)];
            acc = isMax ? std::max(acc, v) : acc + v;
          }
        r.push_back(isMax ? acc : acc / double((h1 - h0) * (w1 - w0)));
      }
  return r;
}

/// Window pooling reference with PyTorch's rules (aten AvgPool2d/MaxPool2d):
/// window start = o*s - p; for averages the end is min(start + k, in + p), the
/// pool size counts padding (count_include_pad) or only the input elements.
/// Max windows take every d-th row and column (dilation d).
std::vector<double> poolRef(const Dims &in, const std::vector<float> &x, const Dims &out, int64_t k,
                            int64_t s, int64_t p, bool isMax, bool includePad, int64_t d = 1) {
  int64_t P = in[0] * in[1], H = in[2], W = in[3], OH = out[2], OW = out[3];
  std::vector<double> r;
  for (int64_t q = 0; q < P; ++q)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t hs = oh * s - p, ws = ow * s - p;
        if (isMax) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t h = hs; h < hs + k * d; h += d)
            for (int64_t w = ws; w < ws + k * d; w += d)
              if (h >= 0 && h < H && w >= 0 && w < W)
                m = std::max(m, double(x[size_t((q * H + h) * W + w)]));
          r.push_back(m);
          continue;
        }
        int64_t he = std::min(hs + k, H + p), we = std::min(ws + k, W + p);
        int64_t poolSize = (he - hs) * (we - ws);
        hs = std::max<int64_t>(hs, 0), ws = std::max<int64_t>(ws, 0);
        he = std::min(he, H), we = std::min(we, W);
        double sum = 0;
        for (int64_t h = hs; h < he; ++h)
          for (int64_t w = ws; w < we; ++w)
            sum += x[size_t((q * H + h) * W + w)];
        r.push_back(sum / double(includePad ? poolSize : (he - hs) * (we - ws)));
      }
  return r;
}

/// A square pool attribute, "[v,v]".
std::string squareAttr(int64_t v) {
  return "[" + std::to_string(v) + "," + std::to_string(v) + "]";
}

/// nn.MaxPool2d with a k×k window, stride s, padding p and dilation d.
rt::Tensor runMaxPool(const Dims &in, const std::vector<float> &x, const Dims &out, int64_t k,
                      int64_t s, int64_t p, bool ceilMode = false, int64_t d = 1) {
  return runOneOp(in, x,
                  std::string("nn.MaxPool2d(%x) {ceil_mode=") + (ceilMode ? "true" : "false") +
                      ", dilation=" + squareAttr(d) + ", kernel_size=" + squareAttr(k) +
                      ", padding=" + squareAttr(p) + ", stride=" + squareAttr(s) + "}",
                  out);
}

/// runMaxPool against poolRef.
void checkMaxPool(const Dims &in, const std::vector<float> &x, const Dims &out, int64_t k,
                  int64_t s, int64_t p, const std::string &what, bool ceilMode = false,
                  int64_t d = 1) {
  expectClose(runMaxPool(in, x, out, k, s, p, ceilMode, d), out,
              poolRef(in, x, out, k, s, p, true, false, d), what);
}

/// nn.AvgPool2d with a k×k window, stride s, padding p against poolRef.
void checkAvgPool(const Dims &in, const std::vector<float> &x, const Dims &out, int64_t k,
                  int64_t s, int64_t p, bool ceilMode, bool includePad, const std::string &what) {
  auto got = runOneOp(in, x,
                      std::string("nn.AvgPool2d(%x) {ceil_mode=") + (ceilMode ? "true" : "false") +
                          ", count_include_pad=" + (includePad ? "true" : "false") +
                          ", kernel_size=" + squareAttr(k) + ", padding=" + squareAttr(p) +
                          ", stride=" + squareAttr(s) + "}",
                      out);
  expectClose(got, out, poolRef(in, x, out, k, s, p, false, includePad), what);
}
} // namespace

TEST_CASE("kernel: adaptive pools with uneven windows") {
  std::mt19937 rng(909);
  SUBCASE("AdaptiveAvgPool2d 7x7 -> 3x3") {
    Dims in{2, 3, 7, 7}, out{2, 3, 3, 3};
    auto x = uniform(rng, count(in));
    auto got = runOneOp(in, x, "nn.AdaptiveAvgPool2d(%x) {output_size=[3,3]}", out);
    expectClose(got, out, adaptiveRef(in, x, 3, 3, false), "adaptive avg");
  }
  SUBCASE("AdaptiveMaxPool2d 7x5 -> 3x2") {
    Dims in{2, 3, 7, 5}, out{2, 3, 3, 2};
    auto x = uniform(rng, count(in));
    auto got = runOneOp(in, x, "nn.AdaptiveMaxPool2d(%x) {output_size=[3,2]}", out);
    expectClose(got, out, adaptiveRef(in, x, 3, 2, true), "adaptive max");
  }
  SUBCASE("F.adaptive_avg_pool2d 5x6 -> 4x4") {
    Dims in{1, 2, 5, 6}, out{1, 2, 4, 4};
    auto x = uniform(rng, count(in));
    auto got = runOneOp(in, x, "F.adaptive_avg_pool2d(%x) {output_size=[4,4]}", out);
    expectClose(got, out, adaptiveRef(in, x, 4, 4, false), "adaptive avg 5x6");
  }
  // Windows of whole rows are summed as one run in 16 lanes, others row by
  // row; 13x17 planes leave tails of each. A NaN in a max window wins.
  SUBCASE("global AdaptiveAvgPool2d and AdaptiveMaxPool2d on 13x17, and 2 columns wide") {
    Dims in{2, 5, 13, 17};
    auto x = uniform(rng, count(in));
    for (bool isMax : {false, true}) {
      std::string op = isMax ? "nn.AdaptiveMaxPool2d" : "nn.AdaptiveAvgPool2d";
      Dims g{2, 5, 1, 1}, cols{2, 5, 1, 2};
      expectClose(runOneOp(in, x, op + "(%x) {output_size=[1,1]}", g),
                  g, adaptiveRef(in, x, 1, 1, isMax), op + " global");
      expectClose(runOneOp(in, x, op + "(%x) {output_size=[1,2]}", cols), cols,
                  adaptiveRef(in, x, 1, 2, isMax), op + " 1x2");
    }
    x[size_t(13 * 17 + 100)] = NAN; // plane 1
    Dims g{2, 5, 1, 1};
    rt::Tensor got = runOneOp(in, x, "nn.AdaptiveMaxPool2d(%x) {output_size=[1,1]}", g);
    CHECK(std::isnan(got.data<float>()[1]));
    CHECK(got.data<float>()[0] == doctest::Approx(adaptiveRef(in, x, 1, 1, true)[0]));
  }
}

TEST_CASE("kernel: avg and max pooling with padding and ceil_mode") {
  std::mt19937 rng(1010);
  SUBCASE("F.avg_pool2d ceil_mode, count_include_pad=false") {
    // H=W=6, k=3, s=2, p=1: ceil((6+2-3)/2)+1 = 4; the last window (start 5)
    // runs past the right padding.
    Dims in{2, 2, 6, 6}, out{2, 2, 4, 4};
    auto x = uniform(rng, count(in));
    auto got = runOneOp(in, x,
                        "F.avg_pool2d(%x) {ceil_mode=true, count_include_pad=false, "
                        "kernel_size=[3,3], padding=[1,1], stride=[2,2]}",
                        out);
    expectClose(got, out, poolRef(in, x, out, 3, 2, 1, false, false), "avg exclude pad");
  }
  SUBCASE("nn.AvgPool2d ceil_mode, count_include_pad=true") {
    Dims in{2, 2, 6, 6}, out{2, 2, 4, 4};
    auto x = uniform(rng, count(in));
    checkAvgPool(in, x, out, 3, 2, 1, true, true, "avg include pad");
  }
  SUBCASE("AvgPool2d 3x3 stride 1 (inception_v3's), both counts") {
    Dims in{2, 3, 9, 10}, out{2, 3, 9, 10};
    auto x = uniform(rng, count(in));
    for (bool include : {true, false}) {
      CAPTURE(include);
      checkAvgPool(in, x, out, 3, 1, 1, false, include, "avg stride 1");
    }
  }
  SUBCASE("MaxPool2d padding 1, ceil_mode") {
    // H=8: ceil((8+2-3)/2)+1 = 5; W=7: ceil((7+2-3)/2)+1 = 4.
    Dims in{2, 3, 8, 7}, out{2, 3, 5, 4};
    auto x = uniform(rng, count(in));
    checkMaxPool(in, x, out, 3, 2, 1, "max ceil", true);
  }
  SUBCASE("MaxPool2d ceil_mode drops a window starting in the padding") {
    // H=W=5, k=2, s=2, p=1: ceil((5+2-1-1)/2)+1 = 4, but the last window
    // would start in the right padding ((4-1)*2 >= 5+1), so PyTorch gives 3.
    Dims in{1, 2, 5, 5}, out{1, 2, 3, 3};
    auto x = uniform(rng, count(in));
    checkMaxPool(in, x, out, 2, 2, 1, "max ceil drop", true);
  }
  SUBCASE("MaxPool2d stride 1 and stride 3 (the non-stride-2 path)") {
    Dims in{1, 3, 9, 10};
    auto x = uniform(rng, count(in));
    Dims out1{1, 3, 9, 10};
    checkMaxPool(in, x, out1, 3, 1, 1, "max stride 1");
    // floor((9+2-4)/3)+1 = 3, floor((10+2-4)/3)+1 = 3.
    Dims out3{1, 3, 3, 3};
    checkMaxPool(in, x, out3, 4, 3, 1, "max stride 3");
  }
  SUBCASE("MaxPool2d 3x3 and 2x2 stride 2 on wide rows (8 outputs per step)") {
    // W=37, k=3, p=1: floor((37+2-3)/2)+1 = 19 outputs per row (two steps,
    // the second overlapping); k=2, p=0: 18. One NaN, in the second step.
    Dims in{1, 3, 9, 37};
    auto x = uniform(rng, count(in));
    Dims out3{1, 3, 5, 19};
    checkMaxPool(in, x, out3, 3, 2, 1, "max 3x3 s2 wide");
    Dims out2{1, 3, 4, 18};
    checkMaxPool(in, x, out2, 2, 2, 0, "max 2x2 s2 wide");
    x[size_t(3 * 37 + 31)] = std::numeric_limits<float>::quiet_NaN(); // row 3, column 31
    auto withNan = runMaxPool(in, x, out3, 3, 2, 1);
    const float *y = withNan.data<float>();
    // Column 31 lies in the windows of outputs 15 and 16 (columns 29-31
    // and 31-33), row 3 in those of output rows 1 and 2.
    for (int64_t oh = 0; oh < 5; ++oh)
      for (int64_t ow = 0; ow < 19; ++ow) {
        bool inWindow = (oh == 1 || oh == 2) && (ow == 15 || ow == 16);
        CHECK_MESSAGE(std::isnan(y[oh * 19 + ow]) == inWindow, "oh " << oh << " ow " << ow);
      }
  }
  SUBCASE("stride 2 a plane at a time and a row at a time, dilation, both averages") {
    // Rows of at most 16 pool a plane at a time (W = 14 here, and the
    // small planes above), wider ones a row at a time (W = 28, 70, 71, and
    // 37 above); H odd and even, ceil_mode windows.
    for (int64_t W : {14, 28, 70, 71}) {
      CAPTURE(W);
      int64_t H = W == 28 ? 28 : 11;
      Dims in{1, 5, H, W};
      auto x = uniform(rng, count(in));
      auto outOf = [](int64_t n, int64_t k, int64_t p) { return (n + 2 * p - k + 1) / 2 + 1; };
      Dims out2{1, 5, outOf(H, 2, 0), outOf(W, 2, 0)};
      checkMaxPool(in, x, out2, 2, 2, 0, "max 2x2 s2 ceil", true);
      Dims out3{1, 5, outOf(H, 3, 1), outOf(W, 3, 1)};
      for (bool include : {true, false}) {
        CAPTURE(include);
        checkAvgPool(in, x, out3, 3, 2, 1, true, include, "avg 3x3 s2");
      }
    }
    // Dilation 2 at stride 2: windows at columns 2·ow − 1 + 2·kw.
    Dims in{1, 3, 12, 13}, out{1, 3, 5, 6};
    auto x = uniform(rng, count(in));
    checkMaxPool(in, x, out, 3, 2, 1, "max dilated s2", false, 2);
  }
  SUBCASE("MaxPool2d propagates NaN like PyTorch") {
    Dims in{1, 1, 4, 4}, out{1, 1, 2, 2};
    std::vector<float> x(16, 1.f);
    x[5] = std::numeric_limits<float>::quiet_NaN(); // in the top-left window only
    auto got = runMaxPool(in, x, out, 2, 2, 0);
    REQUIRE(got.numel() == 4);
    const float *y = got.data<float>();
    CHECK(std::isnan(y[0]));
    CHECK(y[1] == 1.f);
    CHECK(y[2] == 1.f);
    CHECK(y[3] == 1.f);
  }
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

TEST_CASE("kernel: nn.GroupNorm with weight and bias") {
  std::mt19937 rng(1111);
  const int64_t N = 2, C = 6, H = 3, W = 4, G = 2;
  const Dims in{N, C, H, W};
  auto x = uniform(rng, count(in), -2.f, 3.f);
  auto gamma = uniform(rng, C, 0.5f, 1.5f), beta = uniform(rng, C);
  const double eps = 1e-5;
  ModulePtr m = weightedOp("nn.GroupNorm", in,
                           {{"num_groups", i64(G)}, {"num_channels", i64(C)},
                            {"eps", AttrValue::real(eps)}, {"affine", flag(true)}},
                           {{"weight", {C}, gamma}, {"bias", {C}, beta}}, in);
  std::vector<double> ref(size_t(count(in)));
  const int64_t Cg = C / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      double sum = 0, sq = 0, cnt = double(Cg * H * W);
      for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
        for (int64_t i = 0; i < H * W; ++i)
          sum += x[size_t((n * C + c) * H * W + i)];
      double mean = sum / cnt;
      for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
        for (int64_t i = 0; i < H * W; ++i) {
          double d = x[size_t((n * C + c) * H * W + i)] - mean;
          sq += d * d;
        }
      double var = sq / cnt; // biased, as PyTorch normalizes
      for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
        for (int64_t i = 0; i < H * W; ++i) {
          size_t k = size_t((n * C + c) * H * W + i);
          ref[k] = (x[k] - mean) / std::sqrt(var + eps) * gamma[size_t(c)] + beta[size_t(c)];
        }
    }
  expectClose(runModule(*m, {tensorOf(in, x)})[0], in, ref, "GroupNorm");
}

TEST_CASE("kernel: nn.InstanceNorm2d without affine") {
  std::mt19937 rng(1212);
  const int64_t N = 2, C = 3, H = 5, W = 4;
  const Dims in{N, C, H, W};
  auto x = uniform(rng, count(in), -1.f, 2.f);
  auto got = runOneOp(in, x,
                      "nn.InstanceNorm2d(%x) {affine=false, eps=1e-05, num_features=3, "
                      "track_running_stats=false}",
                      in);
  std::vector<double> ref(size_t(count(in)));
  for (int64_t p = 0; p < N * C; ++p) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < H * W; ++i)
      sum += x[size_t(p * H * W + i)];
    double mean = sum / double(H * W);
    for (int64_t i = 0; i < H * W; ++i)
      sq += (x[size_t(p * H * W + i)] - mean) * (x[size_t(p * H * W + i)] - mean);
    double inv = 1.0 / std::sqrt(sq / double(H * W) + 1e-5);
    for (int64_t i = 0; i < H * W; ++i)
      ref[size_t(p * H * W + i)] = (x[size_t(p * H * W + i)] - mean) * inv;
  }
  expectClose(got, in, ref, "InstanceNorm2d");
}

TEST_CASE("kernel: nn.LayerNorm over the last two dims") {
  std::mt19937 rng(1313);
  const Dims in{2, 3, 4, 5};
  const int64_t len = 20;
  auto x = uniform(rng, count(in), -1.f, 3.f);
  auto gamma = uniform(rng, len, 0.5f, 1.5f), beta = uniform(rng, len);
  std::vector<double> plain(size_t(count(in))), affine(plain.size());
  for (int64_t r = 0; r < count(in) / len; ++r) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < len; ++i)
      sum += x[size_t(r * len + i)];
    double mean = sum / len;
    for (int64_t i = 0; i < len; ++i)
      sq += (x[size_t(r * len + i)] - mean) * (x[size_t(r * len + i)] - mean);
    double inv = 1.0 / std::sqrt(sq / len + 1e-5);
    for (int64_t i = 0; i < len; ++i) {
      size_t k = size_t(r * len + i);
      plain[k] = (x[k] - mean) * inv;
      affine[k] = plain[k] * gamma[size_t(i)] + beta[size_t(i)];
    }
  }
  SUBCASE("with weight and bias [4,5]") {
    ModulePtr m = weightedOp("nn.LayerNorm", in,
                             {{"normalized_shape", ints({4, 5})},
                              {"eps", AttrValue::real(1e-5)},
                              {"elementwise_affine", flag(true)}},
                             {{"weight", {4, 5}, gamma}, {"bias", {4, 5}, beta}}, in);
    expectClose(runModule(*m, {tensorOf(in, x)})[0], in, affine, "LayerNorm affine");
  }
  SUBCASE("without affine") {
    auto got = runOneOp(in, x,
                        "nn.LayerNorm(%x) {elementwise_affine=false, eps=1e-05, "
                        "normalized_shape=[4,5]}",
                        in);
    expectClose(got, in, plain, "LayerNorm plain");
  }
}

//===----------------------------------------------------------------------===//
// Convolution and linear layers
//===----------------------------------------------------------------------===//

namespace {
struct ConvSpec {
  int64_t N, C, H, W, OC, K, stride, pad, dil, groups;
  bool bias;
};

/// Direct convolution: y[n,oc,oh,ow] = b[oc] + sum over the group's input
/// channels and the kernel of x[n, g*Cg+ic, oh*s-p+kh*d, ow*s-p+kw*d] * w[oc,ic,kh,kw].
std::vector<double> convRef(const ConvSpec &s, const std::vector<float> &x,
                            const std::vector<float> &w, const std::vector<float> &b,
                            int64_t OH, int64_t OW) {
  int64_t Cg = s.C / s.groups, OCg = s.OC / s.groups;
  std::vector<double> y;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t oc = 0; oc < s.OC; ++oc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t g = oc / OCg;
          double acc = s.bias ? b[size_t(oc)] : 0.0;
          for (int64_t ic = 0; ic < Cg; ++ic)
            for (int64_t kh = 0; kh < s.K; ++kh)
              for (int64_t kw = 0; kw < s.K; ++kw) {
                int64_t ih = oh * s.stride - s.pad + kh * s.dil;
                int64_t iw = ow * s.stride - s.pad + kw * s.dil;
                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W)
                  continue;
                acc += double(x[size_t(((n * s.C + g * Cg + ic) * s.H + ih) * s.W + iw)]) *
                       double(w[size_t(((oc * Cg + ic) * s.K + kh) * s.K + kw)]);
              }
          y.push_back(acc);
        }
  return y;
}

/// The shapes of a ConvSpec: input, output and weight.
struct ConvShapes {
  Dims in, out, weight;
};
ConvShapes convShapes(const ConvSpec &s) {
  int64_t OH = (s.H + 2 * s.pad - s.dil * (s.K - 1) - 1) / s.stride + 1;
  int64_t OW = (s.W + 2 * s.pad - s.dil * (s.K - 1) - 1) / s.stride + 1;
  return {{s.N, s.C, s.H, s.W}, {s.N, s.OC, OH, OW}, {s.OC, s.C / s.groups, s.K, s.K}};
}

/// A module of one nn.Conv2d with weights `w` and, if the spec has one,
/// bias `b`.
ModulePtr convModule(const ConvSpec &s, const std::vector<float> &w,
                     const std::vector<float> &b) {
  ConvShapes sh = convShapes(s);
  std::vector<WeightArg> weights{{"weight", sh.weight, w}};
  if (s.bias)
    weights.push_back({"bias", {s.OC}, b});
  return weightedOp("nn.Conv2d", sh.in,
                    {{"in_channels", i64(s.C)},
                     {"out_channels", i64(s.OC)},
                     {"kernel_size", ints({s.K, s.K})},
                     {"stride", ints({s.stride, s.stride})},
                     {"padding", ints({s.pad, s.pad})},
                     {"dilation", ints({s.dil, s.dil})},
                     {"groups", i64(s.groups)},
                     {"bias", flag(s.bias)},
                     {"padding_mode", AttrValue::string("zeros")}},
                    weights, sh.out);
}

/// Builds, runs and checks one nn.Conv2d.
void checkConv(const ConvSpec &s, std::mt19937 &rng, const std::string &what,
               double atol = kAtol, double rtol = kRtol, int threads = 0) {
  CAPTURE(what);
  ConvShapes sh = convShapes(s);
  const Dims &in = sh.in, &out = sh.out;
  int64_t OH = out[2], OW = out[3];
  auto x = uniform(rng, count(in));
  auto w = uniform(rng, count(sh.weight));
  auto b = uniform(rng, s.OC);
  ModulePtr m = convModule(s, w, b);
  auto ref = convRef(s, x, w, b, OH, OW);
  // Kernels choose algorithms by thread count: compile with `threads` and
  // put the process-wide count back afterwards.
  test::ScopedThreadCount restore;
  rt::CompileOptions opts;
  opts.numThreads = threads;
  expectCloseTwice(*m, tensorOf(in, x), out, ref, what, opts, atol, rtol);
}
} // namespace

TEST_CASE("runtime: no thread count means every core, also after OpenBLAS is set up") {
  // OpenBLAS's OpenMP build sets OpenMP's thread count to 1 whenever it is
  // told to run single-threaded; kc must put the default back.
  int expected = std::getenv("OMP_NUM_THREADS") ? omp_get_max_threads() : omp_get_num_procs();
  rt::setNumThreads(0);
  CHECK(omp_get_max_threads() == expected);
  rt::setNumThreads(1);
  CHECK(omp_get_max_threads() == 1);
  rt::setNumThreads(0);
  CHECK(omp_get_max_threads() == expected);
}

TEST_CASE("runtime: the micro-kernels take the widest instruction set the core has") {
  // KC_ISA names a narrower set; unset (or wider than the core), the widest.
  std::string widest = "scalar";
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    widest = "avx2";
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    widest = "avx512";
#endif
  const char *env = std::getenv("KC_ISA");
  std::string expected = widest;
  if (env && (std::string(env) == "scalar" || (std::string(env) == "avx2" && widest != "scalar")))
    expected = env;
  CHECK(std::string(rt::kernelIsa()) == expected);
}

TEST_CASE("kernel: nn.Conv2d grouped, dilated, strided, padded") {
  std::mt19937 rng(1414);
  // OH = (9+2-4-1)/2+1 = 4, OW = (10+2-4-1)/2+1 = 4
  checkConv({2, 4, 9, 10, 6, 3, 2, 1, 2, 2, true}, rng, "groups 2, dilation 2, stride 2, bias");
  checkConv({2, 4, 9, 10, 6, 3, 2, 1, 2, 2, false}, rng, "groups 2, dilation 2, stride 2, no bias");
  checkConv({2, 3, 7, 6, 5, 3, 1, 1, 1, 1, true}, rng, "plain 3x3 stride 1 pad 1");
}

TEST_CASE("kernel: padding='same' with an even span pads the odd unit after") {
  // PyTorch pads d(k-1)/2 before and the rest after; the reference sums
  // the kernel over that padding directly (a 2-d case as depth 1).
  struct Case {
    Dims in, k, d;
    const char *op;
    int64_t groups = 1;
  };
  std::mt19937 rng(11);
  for (const Case &c : {Case{{1, 3, 6, 7}, {4, 2}, {1, 3}, "nn.Conv2d"},
                        Case{{1, 3, 9, 20}, {4, 4}, {1, 1}, "nn.Conv2d", 3},
                        Case{{1, 3, 9, 20}, {2, 6}, {3, 1}, "nn.Conv2d", 3},
                        Case{{1, 3, 9, 20}, {2, 2}, {1, 1}, "nn.Conv2d", 3},
                        Case{{2, 2, 5, 6, 4}, {2, 3, 4}, {1, 1, 1}, "nn.Conv3d"},
                        Case{{1, 2, 5, 6, 4}, {2, 1, 2}, {2, 1, 3}, "nn.Conv3d"}}) {
    CAPTURE(c.op);
    CAPTURE(c.groups);
    size_t n = c.k.size();
    int64_t C = c.in[1], OC = 3, G = c.groups, Cg = C / G, OCg = OC / G;
    Dims wshape{OC, Cg};
    wshape.insert(wshape.end(), c.k.begin(), c.k.end());
    Dims out = c.in;
    out[1] = OC;
    auto x = uniform(rng, count(c.in));
    auto w = uniform(rng, count(wshape));
    ModulePtr m = weightedOp(c.op, c.in,
                             {{"in_channels", i64(C)},
                              {"out_channels", i64(OC)},
                              {"kernel_size", ints(c.k)},
                              {"dilation", ints(c.d)},
                              {"padding", AttrValue::string("same")},
                              {"groups", i64(G)},
                              {"bias", flag(false)}},
                             {{"weight", wshape, w}}, out);
    // As 3 spatial dims: size, kernel, dilation, padding before.
    Dims S(3, 1), K(3, 1), D(3, 1), P(3, 0);
    for (size_t i = 0; i < n; ++i) {
      S[3 - n + i] = c.in[2 + i], K[3 - n + i] = c.k[i], D[3 - n + i] = c.d[i];
      P[3 - n + i] = c.d[i] * (c.k[i] - 1) / 2;
    }
    std::vector<double> ref;
    for (int64_t b = 0; b < c.in[0]; ++b)
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t o0 = 0; o0 < S[0]; ++o0)
          for (int64_t o1 = 0; o1 < S[1]; ++o1)
            for (int64_t o2 = 0; o2 < S[2]; ++o2) {
              double sum = 0;
              for (int64_t ic = oc / OCg * Cg; ic < (oc / OCg + 1) * Cg; ++ic)
                for (int64_t k0 = 0; k0 < K[0]; ++k0)
                  for (int64_t k1 = 0; k1 < K[1]; ++k1)
                    for (int64_t k2 = 0; k2 < K[2]; ++k2) {
                      int64_t i0 = o0 - P[0] + k0 * D[0], i1 = o1 - P[1] + k1 * D[1],
                              i2 = o2 - P[2] + k2 * D[2];
                      if (i0 < 0 || i0 >= S[0] || i1 < 0 || i1 >= S[1] || i2 < 0 || i2 >= S[2])
                        continue;
                      sum += double(x[(((b * C + ic) * S[0] + i0) * S[1] + i1) * S[2] + i2]) *
                             w[(((oc * Cg + ic % Cg) * K[0] + k0) * K[1] + k1) * K[2] + k2];
                    }
              ref.push_back(sum);
            }
    expectCloseTwice(*m, tensorOf(c.in, x), out, ref, c.op);
  }
}

TEST_CASE("kernel: nn.Conv2d depthwise") {
  std::mt19937 rng(1515);
  checkConv({2, 4, 6, 5, 4, 3, 1, 1, 1, 4, true}, rng, "depthwise 3x3 stride 1 pad 1");
  // OH = (6+4-4-1)/2+1 = 3, OW = (5+4-4-1)/2+1 = 3
  checkConv({2, 4, 6, 5, 4, 3, 2, 2, 2, 4, false}, rng, "depthwise stride 2 pad 2 dilation 2");
  checkConv({1, 3, 7, 7, 3, 5, 3, 2, 1, 3, true}, rng, "depthwise 5x5 stride 3 pad 2");
  // The 3x3 register path at stride 2: odd and even widths, with and
  // without padding.
  checkConv({2, 5, 9, 11, 5, 3, 2, 1, 1, 5, true}, rng, "depthwise 3x3 stride 2 pad 1, W 11");
  checkConv({1, 3, 8, 10, 3, 3, 2, 1, 1, 3, false}, rng, "depthwise 3x3 stride 2 pad 1, W 10");
  checkConv({1, 3, 9, 8, 3, 3, 2, 0, 1, 3, true}, rng, "depthwise 3x3 stride 2 pad 0, W 8");
  // Wide enough for the 8-output vector path: 19 outputs (two vector steps
  // and a tail of 3; with padding 1 read in place), and 16 outputs whose
  // last step reads the row's end.
  checkConv({2, 4, 9, 37, 4, 3, 2, 1, 1, 4, true}, rng, "depthwise 3x3 stride 2 pad 1, W 37");
  checkConv({1, 2, 7, 34, 2, 3, 2, 0, 1, 2, false}, rng, "depthwise 3x3 stride 2 pad 0, W 34");
  // Rows shorter than 8 outputs store 8 lanes into the rows after them
  // (the plane's last row through a buffer); longer rows end with an
  // overlapping step. Without padding the loads run past the plane.
  checkConv({1, 8, 7, 7, 8, 3, 1, 1, 1, 8, true}, rng, "depthwise 3x3 stride 1 pad 1, W 7");
  checkConv({2, 8, 14, 14, 8, 3, 1, 1, 1, 8, true}, rng, "depthwise 3x3 stride 1 pad 1, W 14");
  checkConv({1, 4, 5, 17, 4, 3, 1, 0, 1, 4, false}, rng, "depthwise 3x3 stride 1 pad 0, W 17");
  checkConv({1, 8, 14, 14, 8, 3, 2, 1, 1, 8, true}, rng, "depthwise 3x3 stride 2 pad 1, W 14");
  checkConv({1, 3, 4, 3, 3, 3, 2, 1, 1, 3, true}, rng, "depthwise 3x3 stride 2 pad 1, W 3");
}

TEST_CASE("kernel: nn.Conv2d 1x1") {
  std::mt19937 rng(1616);
  checkConv({2, 5, 4, 3, 3, 1, 1, 0, 1, 1, true}, rng, "1x1 (pointwise GEMM)");
  checkConv({2, 5, 5, 4, 3, 1, 2, 0, 1, 1, false}, rng, "1x1 stride 2");
}

namespace {
/// Sets an environment variable for one scope, restoring the old value.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};
} // namespace

TEST_CASE("kernel: nn.Conv2d 3x3 with 32 channels (Winograd and im2col)") {
  // This shape (3x3, stride 1, >= 32 channels in, >= 16 out, >= 64 outputs,
  // partial 4x4 tiles at the right and bottom edges) takes the Winograd
  // F(4x4, 3x3) path. Its transforms cost accuracy: the worst error grows
  // with the channel count (about 4e-5 with 16 input channels, 1.5e-4 with
  // 64 channels and 2.7e-4 with 128, on outputs of magnitude ~10), so the
  // Winograd run is held to the conformance tolerance 1e-4 + 1e-4 * |ref|,
  // and the same shape through im2col to the tolerance of this file.
  ConvSpec spec{1, 32, 10, 9, 16, 3, 1, 1, 1, 1, true};
  {
    std::mt19937 rng(1617);
    checkConv(spec, rng, "3x3 32->16 pad 1 on 10x9 (Winograd)", 1e-4, 1e-4);
  }
  {
    ScopedEnv algo("KC_CONV_ALGO", "im2col");
    std::mt19937 rng(1617);
    checkConv(spec, rng, "3x3 32->16 pad 1 on 10x9 (im2col)");
  }
  {
    // Batch 2, 20 output channels (one full panel of 16 and one of 4 in the
    // packed GEMM), 40 input channels (a partial block of 16 in the filter
    // transform), 4x3 = 12 tiles (two full column blocks of 6), no padding.
    ConvSpec odd{2, 40, 18, 14, 20, 3, 1, 0, 1, 1, false};
    std::mt19937 rng(1618);
    checkConv(odd, rng, "3x3 40->20 batch 2 on 18x14 (Winograd)", 1e-4, 1e-4);
  }
  {
    // No padding, 3 x 10 tiles: groups of 8 consecutive tiles span tile
    // rows.
    ConvSpec inner{1, 32, 14, 40, 16, 3, 1, 0, 1, 1, true};
    std::mt19937 rng(1623);
    checkConv(inner, rng, "3x3 32->16 on 14x40, no padding (Winograd)", 1e-4, 1e-4);
  }
  {
    // Winograd starts at 16 input channels, on any number of threads.
    ConvSpec narrow{1, 16, 12, 11, 16, 3, 1, 1, 1, 1, true};
    std::mt19937 rng(1622);
    for (int threads : {1, 2})
      checkConv(narrow, rng, "3x3 16->16 on 12x11 (Winograd) on " + std::to_string(threads) +
                                 " thread(s)", 1e-4, 1e-4, threads);
  }
  {
    // 1 x 13 tiles: two blocks of 6 and a tail of 1; a group of 8 tiles and
    // one of 5.
    ConvSpec tail{1, 32, 4, 50, 16, 3, 1, 1, 1, 1, true};
    std::mt19937 rng(1619);
    checkConv(tail, rng, "3x3 32->16 pad 1 on 4x50 (Winograd)", 1e-4, 1e-4);
  }
}

TEST_CASE("kernel: nn.Conv2d deep layers on the packed-weight kernel") {
  // Layers with K = C/G*KH*KW > 256 and at most 256 outputs per channel run
  // on kc's own GEMM kernel over weights packed on the first run; these
  // shapes give partial panels of 16 output channels and a partial last
  // strip of 6 columns. checkConv runs each model twice, so the second run
  // uses the packed copy built by the first.
  std::mt19937 rng(1620);
  // 3x3 stride 2, batch 2: K = 360, 8x9 outputs, 20 output channels.
  checkConv(ConvSpec{2, 40, 15, 17, 20, 3, 2, 1, 1, 1, true}, rng, "3x3 s2 40->20 batch 2");
  // Grouped: K = 30*9 = 270 per group, 18 output channels per group.
  checkConv(ConvSpec{1, 60, 9, 9, 36, 3, 1, 1, 1, 2, false}, rng, "3x3 groups 2 60->36");
  // Pointwise: K = 300, 7x7 outputs.
  checkConv(ConvSpec{1, 300, 7, 7, 17, 1, 1, 0, 1, 1, true}, rng, "1x1 300->17 on 7x7");
  // Patches are gathered straight into strips of 6 positions: 7x7 outputs
  // of a padded 3x3 (resnet18's last layers) are 8 strips and 1 position,
  // and with dilation 2 a strip's taps fall in the padding on both sides.
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    checkConv(ConvSpec{1, 32, 7, 7, 24, 3, 1, 1, 1, 1, true}, rng, "3x3 pad 1 32->24 on 7x7" + on,
              kAtol, kRtol, threads);
    checkConv(ConvSpec{1, 32, 9, 9, 20, 3, 1, 2, 2, 1, false}, rng,
              "3x3 dilation 2 pad 2 32->20 on 9x9" + on, kAtol, kRtol, threads);
  }
}

TEST_CASE("kernel: packed-weight GEMMs two panels a step (AVX-512) with 32 to 64 outputs") {
  // The AVX-512 kernel takes two panels of 16 output channels at a time:
  // 48 channels are a full step and a one-panel step, 40 a full step and a
  // partial panel, 64 two full steps. (With AVX2 these are 3 to 4 steps of
  // one panel.)
  std::mt19937 rng(1626);
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    checkConv(ConvSpec{1, 16, 10, 9, 48, 3, 1, 1, 1, 1, true}, rng,
              "3x3 16->48 on 10x9 (Winograd)" + on, 1e-4, 1e-4, threads);
    checkConv(ConvSpec{1, 24, 12, 12, 64, 3, 1, 1, 1, 1, false}, rng,
              "3x3 24->64 on 12x12 (Winograd)" + on, 1e-4, 1e-4, threads);
    checkConv(ConvSpec{1, 64, 7, 7, 40, 3, 1, 1, 1, 1, true}, rng, "3x3 64->40 on 7x7 (deep)" + on,
              kAtol, kRtol, threads);
    checkConv(ConvSpec{1, 40, 7, 7, 64, 3, 1, 1, 1, 1, true}, rng, "3x3 40->64 on 7x7 (deep)" + on,
              kAtol, kRtol, threads);
  }
}

TEST_CASE("kernel: nn.Conv2d on 64 random shapes against the reference") {
  // Shapes drawn (fixed seed) across every convolution path: 1x1 layers
  // wide and deep, 3x3 stride 1 (Winograd from 16 input channels) and 2,
  // depthwise 3x3 at any padding, larger strided kernels, grouped layers,
  // on 1 and 2 threads. Run under both kernel sets by ctest. Tolerance
  // t + t * |ref|: for Winograd t = max(1e-4, 5e-6 * C), its error growing
  // with the channels (see above; sweeps of 3000 shapes saw up to 1.7e-4 at
  // 33 to 48 channels); otherwise this file's 1e-5, scaled by depth / 128
  // past a depth of 128 terms per output (float sums of ~400 terms of
  // magnitude 1 were off by up to 2e-5).
  std::mt19937 rng(1628);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 64; ++i) {
    ConvSpec c{pick(1, 2), 0, pick(3, 20), pick(3, 40), 0, 1, 1, 0, 1, 1, pick(0, 1) == 1};
    switch (i % 6) {
    case 0: // 1x1, few or many input channels
      c.C = pick(1, 2) == 1 ? pick(3, 40) : pick(257, 400), c.OC = pick(8, 70);
      break;
    case 1: // 3x3 stride 1 pad 1
      c.C = pick(8, 48), c.OC = pick(8, 72), c.K = 3, c.pad = 1;
      break;
    case 2: // 3x3 stride 2
      c.C = pick(4, 40), c.OC = pick(8, 40), c.K = 3, c.stride = 2, c.pad = pick(0, 1);
      break;
    case 3: // depthwise 3x3
      c.C = c.OC = c.groups = pick(2, 20), c.K = 3, c.stride = pick(1, 2), c.pad = pick(0, 2);
      break;
    case 4: // a stem: 5x5 or 7x7, stride 2
      c.C = 3, c.OC = pick(8, 40), c.K = pick(0, 1) ? 5 : 7, c.stride = 2, c.pad = c.K / 2;
      break;
    default: // grouped 3x3
      c.groups = 2, c.C = 2 * pick(2, 12), c.OC = 2 * pick(4, 20), c.K = 3, c.pad = 1;
      break;
    }
    // Inputs at least as large as the kernel.
    c.H = std::max(c.H, c.K), c.W = std::max(c.W, c.K);
    bool winograd = c.K == 3 && c.stride == 1 && c.groups == 1 && c.C >= 16;
    std::ostringstream what;
    what << "random #" << i << ": N" << c.N << " C" << c.C << " " << c.H << "x" << c.W << " OC"
         << c.OC << " K" << c.K << " s" << c.stride << " p" << c.pad << " g" << c.groups;
    int64_t depth = c.C / c.groups * c.K * c.K;
    double t = winograd ? std::max(1e-4, 5e-6 * double(c.C))
                        : kAtol * std::max(1.0, double(depth) / 128);
    checkConv(c, rng, what.str(), t, t, 1 + i % 2);
  }
}

TEST_CASE("kernel: nn.ConvTranspose2d strided, padded, dilated, grouped") {
  std::mt19937 rng(1717);
  struct Spec {
    int64_t N, C, H, W, OC, K, s, p, op, d, G;
    bool bias;
  };
  // Each tap's input range is clipped to the output once: stride 3 with
  // dilation 2 and padding 2 cuts both ends. Each output row is built from
  // its phases (columns equal mod the stride): stride 1, kernels equal to
  // the stride (2x2 batched and grouped, 3x3), output padding no tap
  // reaches, and an odd output width at stride 2. The product runs on
  // packed panels by blocks of columns: 64 channels on 40x40 make two
  // blocks and 96 product rows (three steps of two panels).
  for (Spec sp :
       {Spec{2, 4, 3, 5, 6, 3, 2, 1, 1, 1, 1, true}, Spec{1, 4, 4, 3, 6, 3, 2, 1, 1, 1, 2, false},
        Spec{1, 3, 4, 5, 2, 3, 3, 2, 0, 2, 1, true}, Spec{1, 2, 4, 4, 3, 2, 1, 1, 0, 1, 1, true},
        Spec{2, 4, 3, 5, 6, 2, 2, 0, 0, 1, 2, true}, Spec{1, 3, 4, 3, 5, 3, 3, 0, 0, 1, 1, false},
        Spec{1, 2, 3, 4, 3, 2, 2, 0, 1, 1, 1, true}, Spec{1, 2, 3, 4, 3, 3, 2, 1, 0, 1, 1, true},
        Spec{1, 64, 40, 40, 24, 2, 2, 0, 0, 1, 1, true},
        Spec{1, 64, 20, 36, 20, 3, 2, 1, 1, 1, 2, true}}) {
    std::string what = "ConvTranspose2d groups " + std::to_string(sp.G) + " stride " +
                       std::to_string(sp.s) + " dilation " + std::to_string(sp.d);
    CAPTURE(what);
    int64_t OH = (sp.H - 1) * sp.s - 2 * sp.p + sp.d * (sp.K - 1) + sp.op + 1;
    int64_t OW = (sp.W - 1) * sp.s - 2 * sp.p + sp.d * (sp.K - 1) + sp.op + 1;
    int64_t Cg = sp.C / sp.G, OCg = sp.OC / sp.G;
    Dims in{sp.N, sp.C, sp.H, sp.W}, out{sp.N, sp.OC, OH, OW}, ws{sp.C, OCg, sp.K, sp.K};
    auto x = uniform(rng, count(in)), w = uniform(rng, count(ws)), b = uniform(rng, sp.OC);
    std::vector<WeightArg> weights{{"weight", ws, w}};
    if (sp.bias)
      weights.push_back({"bias", {sp.OC}, b});
    ModulePtr m = weightedOp("nn.ConvTranspose2d", in,
                             {{"in_channels", i64(sp.C)},
                              {"out_channels", i64(sp.OC)},
                              {"kernel_size", ints({sp.K, sp.K})},
                              {"stride", ints({sp.s, sp.s})},
                              {"padding", ints({sp.p, sp.p})},
                              {"output_padding", ints({sp.op, sp.op})},
                              {"dilation", ints({sp.d, sp.d})},
                              {"groups", i64(sp.G)},
                              {"bias", flag(sp.bias)}},
                             weights, out);
    // Scatter: every input pixel adds x * w into its kernel window.
    std::vector<double> ref(size_t(count(out)), 0.0);
    for (int64_t n = 0; n < sp.N; ++n)
      for (int64_t oc = 0; oc < sp.OC; ++oc)
        for (int64_t i = 0; i < OH * OW; ++i)
          ref[size_t((n * sp.OC + oc) * OH * OW + i)] = sp.bias ? b[size_t(oc)] : 0.0;
    for (int64_t n = 0; n < sp.N; ++n)
      for (int64_t ci = 0; ci < sp.C; ++ci)
        for (int64_t ih = 0; ih < sp.H; ++ih)
          for (int64_t iw = 0; iw < sp.W; ++iw)
            for (int64_t o = 0; o < OCg; ++o)
              for (int64_t kh = 0; kh < sp.K; ++kh)
                for (int64_t kw = 0; kw < sp.K; ++kw) {
                  int64_t oh = ih * sp.s - sp.p + kh * sp.d, ow = iw * sp.s - sp.p + kw * sp.d;
                  if (oh < 0 || oh >= OH || ow < 0 || ow >= OW)
                    continue;
                  int64_t oc = (ci / Cg) * OCg + o;
                  ref[size_t(((n * sp.OC + oc) * OH + oh) * OW + ow)] +=
                      double(x[size_t(((n * sp.C + ci) * sp.H + ih) * sp.W + iw)]) *
                      double(w[size_t(((ci * OCg + o) * sp.K + kh) * sp.K + kw)]);
                }
    expectClose(runModule(*m, {tensorOf(in, x)})[0], out, ref, what);
  }
}

namespace {
/// x (rows × in) times wᵀ (w: out × in) plus b, as direct sums in double.
std::vector<double> linearRef(const std::vector<float> &x, const std::vector<float> &w,
                              const std::vector<float> &b, int64_t rows, int64_t in, int64_t out) {
  std::vector<double> ref;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = b[size_t(o)];
      for (int64_t i = 0; i < in; ++i)
        acc += double(x[size_t(r * in + i)]) * double(w[size_t(o * in + i)]);
      ref.push_back(acc);
    }
  return ref;
}

/// Runs nn.Linear (in -> out features, with bias) on `inShape` and checks
/// it against a direct sum.
void checkLinear(const Dims &inShape, int64_t outFeatures, std::mt19937 &rng,
                 const std::string &what, double tol = kAtol) {
  CAPTURE(what);
  int64_t inFeatures = inShape.back(), rows = count(inShape) / inFeatures;
  Dims outShape = inShape;
  outShape.back() = outFeatures;
  auto x = uniform(rng, count(inShape)), w = uniform(rng, outFeatures * inFeatures),
       b = uniform(rng, outFeatures);
  std::vector<double> ref = linearRef(x, w, b, rows, inFeatures, outFeatures);
  ModulePtr m = weightedOp(
      "nn.Linear", inShape,
      {{"in_features", i64(inFeatures)}, {"out_features", i64(outFeatures)}, {"bias", flag(true)}},
      {{"weight", {outFeatures, inFeatures}, w}, {"bias", {outFeatures}, b}}, outShape);
  expectCloseTwice(*m, tensorOf(inShape, x), outShape, ref, what, {}, tol, tol);
}
} // namespace

TEST_CASE("kernel: nn.Linear on a 3-d input") {
  std::mt19937 rng(1818);
  checkLinear({2, 4, 5}, 3, rng, "8 rows, 5 -> 3");
}

TEST_CASE("kernel: nn.Linear with few rows (one strip of columns)") {
  // 1 to 4 rows are one partial strip of the panel kernel's columns; a
  // weight of 250 x 300 is 16 panels, shared out over the threads.
  std::mt19937 rng(1819);
  checkLinear({1, 300}, 250, rng, "1 row, 300 -> 250");
  checkLinear({2, 2, 300}, 251, rng, "4 rows, 300 -> 251");
  checkLinear({1, 7}, 3, rng, "1 row, 7 -> 3 (one thread)");
}

TEST_CASE("kernel: nn.Linear on the packed-weight kernel, strips whole and partial") {
  // The weight is packed in panels of 16 outputs and the rows taken 6 at
  // a time: 5 rows are one partial strip, 17 rows two strips and a partial
  // one, 250 outputs 15 panels and a partial one. 300 rows are one block.
  std::mt19937 rng(1822);
  checkLinear({5, 300}, 250, rng, "5 rows, 300 -> 250 (packed)");
  checkLinear({17, 64}, 40, rng, "17 rows, 64 -> 40 (packed)");
  checkLinear({2, 128, 33}, 21, rng, "256 rows, 33 -> 21 (packed)");
  checkLinear({300, 24}, 19, rng, "300 rows, 24 -> 19 (sgemm)");
  // Two panels a step with AVX-512: 64 outputs are two full steps, 48 a
  // full step and a one-panel step.
  checkLinear({7, 70}, 64, rng, "7 rows, 70 -> 64 (packed)");
  checkLinear({7, 70}, 48, rng, "7 rows, 70 -> 48 (packed)");
}

TEST_CASE("kernel: nn.Linear on 48 random shapes against the reference") {
  // Rows from 1 to 300 (one block of the packed-weight kernel), features 1 to 300 in
  // and out, on 1 and 2 threads; under both kernel sets by ctest. Tolerance 1e-5 scaled by
  // in_features / 128 past 128 (float sums, as for the random convolutions).
  std::mt19937 rng(1824);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  test::ScopedThreadCount restore;
  for (int i = 0; i < 48; ++i) {
    int64_t rows = i % 4 == 0 ? pick(1, 4) : i % 4 == 3 ? pick(257, 300) : pick(5, 256);
    int64_t in = pick(1, 300), out = pick(1, 300);
    omp_set_num_threads(1 + i % 2);
    std::ostringstream what;
    what << "random #" << i << ": " << rows << " rows, " << in << " -> " << out;
    checkLinear({rows, in}, out, rng, what.str(), kAtol * std::max(1.0, double(in) / 128));
  }
}

TEST_CASE("kernel: nn.Linear over many rows, blocks of rows on the threads, GELU fused") {
  // With two blocks of rows or more per thread (blocks of at most 512 KB
  // of outputs: 336 rows of 384 features), the blocks go to the threads,
  // each block's bias and GELU applied after its product. 1500 rows are
  // four full blocks and one of 156; 1 thread runs them one after
  // another. Fused and not.
  std::mt19937 rng(1825);
  const int64_t rows = 1500, in = 40, out = 384;
  auto x = uniform(rng, rows * in), w = uniform(rng, out * in), b = uniform(rng, out);
  std::vector<double> ref = linearRef(x, w, b, rows, in, out);
  for (double &v : ref)
    v *= 0.5 * (1.0 + std::erf(v / std::sqrt(2.0)));
  Var xv = var("x", tensorType(DType::F32, {rows, in}));
  Call lin =
      call("nn.Linear",
           {Expr(xv), floatConstant("fc.weight", {out, in}, w), floatConstant("fc.bias", {out}, b)},
           {{"in_features", i64(in)}, {"out_features", i64(out)}, {"bias", flag(true)}},
           {ArgKey{}, {ArgRole::Weight, "weight"}, {ArgRole::Weight, "bias"}}, "fc");
  Call gelu = call("nn.GELU", {Expr(lin)}, {}, {}, "gelu");
  auto m = std::make_shared<Module>();
  m->add(make<const FunctionNode>("main", std::vector<Var>{xv}, Expr(gelu), Type(), false));
  inferOrFail(*m);
  test::fuseOps(*m);
  test::ScopedThreadCount restore;
  for (int threads : {1, 2})
    for (bool fuse : {true, false}) {
      std::string what = std::to_string(threads) + " thread(s)" + (fuse ? ", fused" : "");
      rt::CompileOptions opts;
      opts.fuseActivations = fuse;
      opts.numThreads = threads;
      auto cm = rt::CompiledModel::compile(*m, opts);
      REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
      auto outs = (*cm)->run({tensorOf({rows, in}, x)});
      REQUIRE_MESSAGE(bool(outs), (outs ? "" : llvm::toString(outs.takeError())));
      expectClose((*outs)[0], {rows, out}, ref, what);
    }
}

namespace {
/// Self-attention through nn.MultiheadAttention against a double-precision
/// reference: projections, per-head softmax(Q Kᵀ / sqrt(d)) V, output
/// projection.
void checkMha(int64_t B, int64_t L, int64_t E, int64_t H, bool batchFirst, std::mt19937 &rng,
              const std::string &what) {
  CAPTURE(what);
  Dims shape = batchFirst ? Dims{B, L, E} : Dims{L, B, E};
  auto x = uniform(rng, count(shape)), win = uniform(rng, 3 * E * E), bin = uniform(rng, 3 * E),
       wo = uniform(rng, E * E), bo = uniform(rng, E);
  auto at = [&](int64_t b, int64_t i) { return batchFirst ? (b * L + i) * E : (i * B + b) * E; };
  int64_t d = E / H;
  std::vector<double> ref(size_t(count(shape)));
  for (int64_t b = 0; b < B; ++b) {
    // proj[p][i][e]: p = 0, 1, 2 for query, key, value.
    std::vector<double> proj(size_t(3 * L * E)), o(size_t(L * E));
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t e = 0; e < E; ++e) {
          double acc = bin[size_t(p * E + e)];
          for (int64_t k = 0; k < E; ++k)
            acc += double(x[size_t(at(b, i) + k)]) * win[size_t((p * E + e) * E + k)];
          proj[size_t((p * L + i) * E + e)] = acc;
        }
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(static_cast<size_t>(L));
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += proj[size_t(i * E + h * d + c)] * proj[size_t((L + j) * E + h * d + c)];
          s[size_t(j)] = dot / std::sqrt(double(d));
          mx = std::max(mx, s[size_t(j)]);
        }
        for (double &v : s)
          sum += (v = std::exp(v - mx));
        for (int64_t c = 0; c < d; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < L; ++j)
            acc += s[size_t(j)] / sum * proj[size_t((2 * L + j) * E + h * d + c)];
          o[size_t(i * E + h * d + c)] = acc;
        }
      }
    for (int64_t i = 0; i < L; ++i)
      for (int64_t e = 0; e < E; ++e) {
        double acc = bo[size_t(e)];
        for (int64_t k = 0; k < E; ++k)
          acc += o[size_t(i * E + k)] * wo[size_t(e * E + k)];
        ref[size_t(at(b, i) + e)] = acc;
      }
  }
  ModulePtr m = weightedOp("nn.MultiheadAttention", shape,
                           {{"embed_dim", i64(E)},
                            {"num_heads", i64(H)},
                            {"batch_first", flag(batchFirst)},
                            {"bias", flag(true)}},
                           {{"in_proj_weight", {3 * E, E}, win},
                            {"in_proj_bias", {3 * E}, bin},
                            {"out_proj.weight", {E, E}, wo},
                            {"out_proj.bias", {E}, bo}},
                           shape);
  expectCloseTwice(*m, tensorOf(shape, x), shape, ref, what);
}
} // namespace

TEST_CASE("kernel: nn.MultiheadAttention, small and large heads, both layouts") {
  // Heads of at most 16384 multiply-adds (L·L·d) run as loops, larger ones
  // as sgemm calls; sequences up to 256 project on the packed-weight
  // kernel, longer ones on sgemm.
  std::mt19937 rng(1823);
  checkMha(2, 7, 16, 2, true, rng, "batch 2, 7 tokens, 2 heads of 8 (loops)");
  checkMha(2, 9, 24, 3, false, rng, "sequence-first, 9 tokens, 3 heads of 8 (loops)");
  checkMha(1, 40, 32, 2, true, rng, "40 tokens, 2 heads of 16 (sgemm heads)");
  checkMha(1, 260, 8, 1, false, rng, "260 tokens (sgemm projections and heads)");
}

namespace {
/// `m` (its groups made by fuse-ops) compiled for `threads` with fusion on
/// or off, checked to run as `steps` steps.
std::unique_ptr<rt::CompiledModel> compileSteps(const Module &m, bool fuse, int threads,
                                                unsigned steps) {
  rt::CompileOptions opts;
  opts.fuseActivations = fuse;
  opts.numThreads = threads;
  auto cm = rt::CompiledModel::compile(m, opts);
  REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
  CHECK((*cm)->numSteps() == steps);
  return std::move(*cm);
}

/// `op`'s one call followed by the activation `act` (attributes `attrs`),
/// its result f32 of shape `out`.
ModulePtr withActivation(const ModulePtr &op, const std::string &act, Attrs attrs,
                         const Dims &out) {
  Call c0(llvm::cast<CallNode>(op->main()->body().get()));
  Call a = call(act, {Expr(c0)}, std::move(attrs));
  a->setType(tensorType(DType::F32, out));
  auto m = std::make_shared<Module>();
  m->add(make<const FunctionNode>("main", op->main()->params(), Expr(a),
                                  tensorType(DType::F32, out), false));
  inferOrFail(*m);
  return m;
}

/// An op -> activation pair grouped by fuse-ops, run on `threads` threads
/// as one step with fusion on and as two with it off, each against `ref`.
void checkFusedAndApart(Module &m, const Dims &in, const std::vector<float> &x, const Dims &out,
                        const std::vector<double> &ref, const std::string &what, double atol,
                        double rtol, int threads) {
  test::fuseOps(m);
  test::ScopedThreadCount restore;
  for (bool fuse : {true, false}) {
    auto cm = compileSteps(m, fuse, threads, fuse ? 1u : 2u);
    auto outs = cm->run({tensorOf(in, x)});
    REQUIRE_MESSAGE(bool(outs), (outs ? "" : llvm::toString(outs.takeError())));
    expectClose((*outs)[0], out, ref, what + (fuse ? " (fused)" : " (separate)"), atol, rtol);
  }
}

/// Builds conv -> activation and checks it with the activation folded into
/// the convolution's epilogue and, with fusion off, run separately.
void checkConvActivation(const ConvSpec &s, const std::string &act, Attrs actAttrs,
                         const std::function<double(double)> &refAct, std::mt19937 &rng,
                         const std::string &what, double atol = kAtol, double rtol = kRtol,
                         int threads = 0) {
  CAPTURE(what);
  ConvShapes sh = convShapes(s);
  const Dims &in = sh.in, &out = sh.out;
  auto x = uniform(rng, count(in)), w = uniform(rng, count(sh.weight)), b = uniform(rng, s.OC);
  ModulePtr m = withActivation(convModule(s, w, b), act, std::move(actAttrs), out);
  auto ref = convRef(s, x, w, b, out[2], out[3]);
  for (double &v : ref)
    v = refAct(v);
  checkFusedAndApart(*m, in, x, out, ref, what, atol, rtol, threads);
}

/// An elementwise expression after a convolution, for checkConvEpilogue:
/// its body in kc's text (operands %c, the convolution's output, and %r;
/// $T stands for the result's type),
/// whether %c is its first operand, the shape of %r given the output's
/// channels, and its value in double.
struct EpilogueExpr {
  std::string body;
  bool convFirst;
  bool perChannel; ///< %r is [1, OC, 1, 1], else the output's shape
  std::function<double(double c, double r)> ref;
};

/// nn.Conv2d, then `e` of its output and a second input, then `act` (or
/// none): fuse-ops makes the three one group, and a convolution kernel
/// that takes expressions runs it as one step (`takes`), else as two.
/// Checked against the reference, fused and not.
void checkConvEpilogue(const ConvSpec &s, const EpilogueExpr &e, const std::string &act,
                       const std::function<double(double)> &refAct, bool takes, std::mt19937 &rng,
                       const std::string &what, int threads, double atol = kAtol,
                       double rtol = kRtol) {
  CAPTURE(what);
  ConvShapes sh = convShapes(s);
  const Dims &in = sh.in, &out = sh.out;
  Dims rs = e.perChannel ? Dims{1, s.OC, 1, 1} : out;
  auto x = uniform(rng, count(in)), w = uniform(rng, count(sh.weight)), b = uniform(rng, s.OC),
       r = uniform(rng, count(rs));
  ModulePtr conv = convModule(s, w, b);
  auto type = [](const Dims &d) { return tensorType(DType::F32, d); };
  // The expression function, parsed from its body.
  std::string t = "f32" + rt::shapeToString(out), bodyText = e.body;
  for (size_t at; (at = bodyText.find("$T")) != std::string::npos;)
    bodyText.replace(at, 2, t);
  std::string text = "fn @e(%c: " + t + ", %r: f32" + rt::shapeToString(rs) + ") -> " + t +
                     " primitive {\n" + bodyText +
                     "\n}\n\nfn @main(%a: f32[1]) -> f32[1] {\n  return %a\n}\n";
  ModulePtr parsed = parseTyped(text);
  Function fn = parsed->lookup("e");
  auto m = std::make_shared<Module>();
  m->add(fn);
  Var rv = var("r", type(rs));
  Expr c0(conv->main()->body());
  std::vector<Expr> args = e.convFirst ? std::vector<Expr>{c0, rv} : std::vector<Expr>{rv, c0};
  Call ec = call(fn, args, Attrs{}, std::vector<ArgKey>(2), "expr");
  Expr body = ec;
  if (!act.empty())
    body = call(act, {body}, {}, {}, "act");
  std::vector<Var> params = conv->main()->params();
  params.push_back(rv);
  m->add(make<const FunctionNode>("main", params, body, type(out), false));
  inferOrFail(*m);
  test::fuseOps(*m);
  auto ref = convRef(s, x, w, b, out[2], out[3]);
  int64_t plane = out[2] * out[3];
  for (size_t i = 0; i < ref.size(); ++i) {
    double rv = e.perChannel ? r[size_t(int64_t(i) / plane % s.OC)] : r[i];
    double v = e.ref(ref[i], rv);
    ref[i] = refAct ? refAct(v) : v;
  }
  test::ScopedThreadCount restore;
  unsigned calls = act.empty() ? 2 : 3;
  for (bool fuse : {true, false}) {
    auto cm = compileSteps(*m, fuse, threads, !fuse ? calls : takes ? 1u : 2u);
    for (int run = 0; run < 2; ++run) { // the second on packed weights
      auto outs = cm->run({tensorOf(in, x), tensorOf(rs, r)});
      REQUIRE_MESSAGE(bool(outs), (outs ? "" : llvm::toString(outs.takeError())));
      expectClose((*outs)[0], out, ref, what + (fuse ? " (fused)" : " (separate)"), atol, rtol);
    }
  }
}

/// x * s (s one value per channel, per image with `perImage`), then
/// nn.Conv2d and ReLU: fuse-ops makes the three one group, and a 1x1
/// convolution on the strip or panel kernel scales its input as it reads
/// it (`takes`: one step), else the product is a step of its own.
void checkScaledConv(const ConvSpec &s, bool perImage, bool takes, std::mt19937 &rng,
                     const std::string &what, int threads) {
  CAPTURE(what);
  ConvShapes sh = convShapes(s);
  const Dims &in = sh.in, &out = sh.out;
  Dims ss{perImage ? s.N : 1, s.C, 1, 1};
  auto x = uniform(rng, count(in)), w = uniform(rng, count(sh.weight)), b = uniform(rng, s.OC),
       sc = uniform(rng, count(ss));
  ModulePtr conv = convModule(s, w, b);
  ModulePtr parsed = parseTyped("fn @scale(%x: f32" + rt::shapeToString(in) + ", %s: f32" +
                                rt::shapeToString(ss) + ") -> f32" + rt::shapeToString(in) +
                                " primitive {\n  %0 = mul(%x, %s) : f32" + rt::shapeToString(in) +
                                "\n  return %0\n}\n\nfn @main(%a: f32[1]) -> f32[1] {\n  "
                                "return %a\n}\n");
  Function fn = parsed->lookup("scale");
  auto m = std::make_shared<Module>();
  m->add(fn);
  Var xv = var("x", tensorType(DType::F32, in)), sv = var("s", tensorType(DType::F32, ss));
  Call scaled = call(fn, {Expr(xv), Expr(sv)}, Attrs{}, std::vector<ArgKey>(2), "gate");
  auto *c0 = llvm::cast<CallNode>(conv->main()->body().get());
  std::vector<Expr> args{Expr(scaled)};
  for (size_t i = 1; i < c0->numArgs(); ++i)
    args.push_back(c0->arg(i));
  Call c = call(c0->callee(), args, c0->attrs(), c0->keys(), "conv");
  Call a = call("nn.ReLU", {Expr(c)}, {}, {}, "relu");
  m->add(make<const FunctionNode>("main", std::vector<Var>{xv, sv}, Expr(a),
                                  tensorType(DType::F32, out), false));
  inferOrFail(*m);
  test::fuseOps(*m);
  std::vector<float> xs(x.size());
  int64_t plane = s.H * s.W;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t n = int64_t(i) / (s.C * plane), ch = int64_t(i) / plane % s.C;
    xs[i] = float(double(x[i]) * double(sc[size_t((perImage ? n * s.C : 0) + ch)]));
  }
  auto ref = convRef(s, xs, w, b, out[2], out[3]);
  for (double &v : ref)
    v = std::max(v, 0.0);
  test::ScopedThreadCount restore;
  for (bool fuse : {true, false}) {
    auto cm = compileSteps(*m, fuse, threads, !fuse ? 3u : takes ? 1u : 2u);
    for (int run = 0; run < 2; ++run) {
      auto outs = cm->run({tensorOf(in, x), tensorOf(ss, sc)});
      REQUIRE_MESSAGE(bool(outs), (outs ? "" : llvm::toString(outs.takeError())));
      expectClose((*outs)[0], out, ref, what + (fuse ? " (fused)" : " (separate)"));
    }
  }
}
} // namespace

TEST_CASE("kernel: nn.BatchNorm2d takes the activation after it") {
  // densenet's BatchNorm -> ReLU before each convolution: one step, the
  // activation applied to each plane as it is normalized, against the two
  // calls run apart and a reference in double. Planes of 7x9 (a tail on
  // any vector width), batch 2, 1 and 2 threads.
  std::mt19937 rng(4242);
  const int64_t N = 2, C = 6, H = 7, W = 9;
  const Dims in{N, C, H, W};
  std::vector<float> mean = uniform(rng, C), var = uniform(rng, C), gamma = uniform(rng, C),
                     beta = uniform(rng, C);
  for (float &v : var)
    v = std::abs(v) + 0.1f;
  const double eps = 1e-5;
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  auto hardswish = [](double v) { return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; };
  const std::pair<const char *, std::function<double(double)>> acts[] = {
      {"nn.ReLU", [](double v) { return std::max(v, 0.0); }},
      {"nn.ReLU6", relu6},
      {"nn.Hardswish", hardswish}};
  for (const auto &[act, refAct] : acts)
    for (int threads : {1, 2}) {
      CAPTURE(act);
      CAPTURE(threads);
      // Values spread over [-8, 8], so ReLU6 and Hardswish clip both ways.
      auto x = uniform(rng, count(in));
      for (float &v : x)
        v *= 8.f;
      ModulePtr bn = weightedOp(
          "nn.BatchNorm2d", in,
          {{"num_features", i64(C)}, {"eps", AttrValue::real(eps)}, {"affine", flag(true)}},
          {{"running_mean", {C}, mean},
           {"running_var", {C}, var},
           {"weight", {C}, gamma},
           {"bias", {C}, beta}},
          in);
      ModulePtr m = withActivation(bn, act, {}, in);
      std::vector<double> ref;
      for (int64_t i = 0; i < N * C * H * W; ++i) {
        int64_t c = i / (H * W) % C;
        double y =
            (x[size_t(i)] - mean[size_t(c)]) / std::sqrt(var[size_t(c)] + eps) * gamma[size_t(c)] +
            beta[size_t(c)];
        ref.push_back(refAct(y));
      }
      checkFusedAndApart(*m, in, x, in, ref, act, kAtol, kRtol, threads);
    }
}

TEST_CASE("kernel: a 1x1 convolution scales its input per channel as it reads it") {
  // The gate of a squeeze-and-excitation block multiplied into the 1x1
  // projection after it: the strip kernel scales each row of a block of
  // its input as it copies it, the panel kernel each row of its strips.
  std::mt19937 rng(2612);
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    checkScaledConv({1, 40, 13, 13, 20, 1, 1, 0, 1, 1, true}, false, true, rng,
                    "1x1 40->20 on 13x13 (strip kernel)" + on, threads);
    checkScaledConv({2, 40, 13, 13, 20, 1, 1, 0, 1, 1, true}, true, true, rng,
                    "1x1 40->20 on 13x13, batch 2, a gate per image (strip kernel)" + on, threads);
    checkScaledConv({2, 300, 7, 7, 17, 1, 1, 0, 1, 1, true}, true, true, rng,
                    "1x1 300->17 on 7x7, a gate per image (panel kernel)" + on, threads);
    checkScaledConv({2, 300, 7, 7, 17, 1, 1, 0, 1, 1, true}, false, true, rng,
                    "1x1 300->17 on 7x7 (panel kernel)" + on, threads);
    // Below 8 outputs the layer runs on OpenBLAS, which reads x as it lies.
    checkScaledConv({1, 16, 9, 9, 4, 1, 1, 0, 1, 1, true}, false, false, rng,
                    "1x1 16->4 (im2col and OpenBLAS)" + on, threads);
  }
}

TEST_CASE("kernel: a convolution with the expression after it in its epilogue") {
  // Each convolution family stores blocks of its output with the bias
  // applied, then the expression (a residual sum, a per-channel product,
  // any program) and the activation on each block while it is in cache;
  // the depthwise loops take none, and the expression runs as its own
  // step with the activation.
  const EpilogueExpr residual{"  %0 = add(%c, %r) : $T\n  return %0", true, false,
                              [](double c, double r) { return c + r; }};
  const EpilogueExpr residualSecond{"  %0 = add(%r, %c) : $T\n  return %0", false, false,
                                    [](double c, double r) { return c + r; }};
  const EpilogueExpr scaled{"  %0 = mul(%c, %r) : $T\n  %1 = sub(%0, 0.5:f32) : $T\n"
                            "  return %1",
                            true, true, [](double c, double r) { return c * r - 0.5; }};
  auto relu = [](double v) { return std::max(v, 0.0); };
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  struct Family {
    const char *name;
    ConvSpec spec;
    bool takes;
    double tol;
  };
  const Family families[] = {
      {"1x1 (strip kernel)", {2, 64, 13, 13, 20, 1, 1, 0, 1, 1, true}, true, kAtol},
      {"3x3 patches (strip kernel)", {2, 6, 11, 13, 10, 3, 1, 1, 1, 1, true}, true, kAtol},
      {"3x3 s2 deep (panel kernel)", {2, 40, 15, 17, 20, 3, 2, 1, 1, 1, true}, true, kAtol},
      {"3x3 (Winograd)", {1, 32, 30, 27, 20, 3, 1, 1, 1, 1, true}, true, 1e-4},
      {"3x3 groups 4 (direct loop)", {1, 32, 14, 14, 32, 3, 1, 1, 1, 4, true}, true, kAtol},
      {"3x3 depthwise", {1, 16, 10, 10, 16, 3, 1, 1, 1, 16, true}, false, kAtol},
      // One value a channel: the epilogue's column of biases in one run.
      {"1x1 on 1x1 planes (panel kernel)", {2, 72, 1, 1, 40, 1, 1, 0, 1, 1, true}, true, kAtol},
  };
  std::mt19937 rng(2611);
  for (int threads : {1, 2})
    for (const Family &f : families) {
      std::string on = std::string(f.name) + " on " + std::to_string(threads) + " thread(s)";
      checkConvEpilogue(f.spec, residual, "nn.ReLU", relu, f.takes, rng, on + ": + r, ReLU",
                        threads, f.tol, f.tol);
      checkConvEpilogue(f.spec, residualSecond, "", nullptr, f.takes, rng, on + ": r +", threads,
                        f.tol, f.tol);
      checkConvEpilogue(f.spec, scaled, "nn.SiLU", silu, f.takes, rng, on + ": * r[c] - 0.5, SiLU",
                        threads, f.tol, f.tol);
    }
  {
    ScopedEnv algo("KC_CONV_ALGO", "im2col");
    checkConvEpilogue(families[3].spec, residual, "nn.ReLU", relu, true, rng,
                      "3x3 (im2col and OpenBLAS): + r, ReLU", 0);
  }
}

namespace {
/// A 1x1 nn.Conv2d (C -> E, bias) and ReLU6, then a depthwise 3x3
/// nn.Conv2d over E channels (stride, padding, bias) and `act2`: the pair a
/// 1x1 layer absorbs, run in bands of rows, when its output outgrows L2.
/// With `alsoOut`, the 1x1 layer's activation is a model output too (so it
/// must be stored and nothing is absorbed). Checked fused and not, and, on
/// AVX-512 cores, that the fused plan holds the expected number of steps.
void checkExpandDepthwise(int64_t N, int64_t C, int64_t H, int64_t W, int64_t E, int64_t stride,
                          int64_t pad, const std::string &act2,
                          const std::function<double(double)> &refAct2, bool alsoOut,
                          int threads, std::mt19937 &rng, const std::string &what) {
  CAPTURE(what);
  ConvSpec pw{N, C, H, W, E, 1, 1, 0, 1, 1, true};
  ConvSpec dw{N, E, H, W, E, 3, stride, pad, 1, E, true};
  ConvShapes s1 = convShapes(pw), s2 = convShapes(dw);
  auto x = uniform(rng, count(s1.in)), w1 = uniform(rng, count(s1.weight)), b1 = uniform(rng, E),
       w2 = uniform(rng, count(s2.weight)), b2 = uniform(rng, E);
  auto convAttrs = [](const ConvSpec &s) {
    return Attrs{{"in_channels", i64(s.C)},
                 {"out_channels", i64(s.OC)},
                 {"kernel_size", ints({s.K, s.K})},
                 {"stride", ints({s.stride, s.stride})},
                 {"padding", ints({s.pad, s.pad})},
                 {"dilation", ints({1, 1})},
                 {"groups", i64(s.groups)},
                 {"bias", flag(true)},
                 {"padding_mode", AttrValue::string("zeros")}};
  };
  std::vector<ArgKey> keys{ArgKey{}, {ArgRole::Weight, "weight"}, {ArgRole::Weight, "bias"}};
  Var xv = var("x", tensorType(DType::F32, s1.in));
  Call c1 =
      call("nn.Conv2d",
           {Expr(xv), floatConstant("pw.weight", s1.weight, w1), floatConstant("pw.bias", {E}, b1)},
           convAttrs(pw), keys, "pw");
  Call a1 = call("nn.ReLU6", {Expr(c1)}, {}, {}, "relu6");
  Call c2 =
      call("nn.Conv2d",
           {Expr(a1), floatConstant("dw.weight", s2.weight, w2), floatConstant("dw.bias", {E}, b2)},
           convAttrs(dw), keys, "dw");
  Call a2 = call(act2, {Expr(c2)}, {}, {}, "act2");
  Expr body = alsoOut ? Expr(tuple({Expr(a2), Expr(a1)})) : Expr(a2);
  auto m = std::make_shared<Module>();
  m->add(make<const FunctionNode>("main", std::vector<Var>{xv}, body, Type(), false));
  inferOrFail(*m);
  test::fuseOps(*m);
  auto mid = convRef(pw, x, w1, b1, H, W);
  std::vector<float> midF(mid.size());
  for (size_t i = 0; i < mid.size(); ++i)
    midF[i] = float(std::min(std::max(mid[i], 0.0), 6.0));
  auto ref = convRef(dw, midF, w2, b2, s2.out[2], s2.out[3]);
  for (double &v : ref)
    v = refAct2(v);
  test::ScopedThreadCount restore;
  for (bool fuse : {true, false}) {
    rt::CompileOptions opts;
    opts.fuseActivations = fuse;
    opts.numThreads = threads;
    auto cm = rt::CompiledModel::compile(*m, opts);
    REQUIRE_MESSAGE(bool(cm), (cm ? "" : llvm::toString(cm.takeError())));
    // The pair runs in bands with the masked depthwise loop (16 lanes).
    if (fuse && uk::microKernels().depthwiseMasked[0])
      CHECK((*cm)->numSteps() == (alsoOut ? 2u : 1u));
    // Compiled for one thread, run on two: the bands' buffers were sized
    // for one.
    if (threads == 1)
      omp_set_num_threads(2);
    for (int run = 0; run < 2; ++run) { // the second on the packed weights
      auto outs = (*cm)->run({tensorOf(s1.in, x)});
      REQUIRE_MESSAGE(bool(outs), (outs ? "" : llvm::toString(outs.takeError())));
      std::string how = what + (fuse ? " (fused" : " (separate") + (run ? ", again)" : ")");
      expectClose((*outs)[0], s2.out, ref, how);
      if (alsoOut) {
        std::vector<double> midRef(midF.begin(), midF.end());
        expectClose((*outs)[1], s1.out, midRef, how + " 1x1 output");
      }
    }
  }
}
} // namespace

namespace {
void checkBands() {
  // With AVX-512, a 1x1 layer whose output is 1 MB or more takes the 3x3
  // depthwise layer reading it; the two run in bands of the depthwise
  // layer's output rows, each band's expanded rows (and the rows above and
  // below it, computed again for the next band) kept in a buffer. 48
  // channels of 80x70 are 1.07 MB: bands of 15 and 16 rows at stride 1.
  std::mt19937 rng(1629);
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    checkExpandDepthwise(1, 8, 80, 70, 48, 1, 1, "nn.ReLU6", relu6, false, threads, rng,
                         "stride 1 pad 1 -> ReLU6" + on);
    checkExpandDepthwise(2, 5, 81, 75, 48, 2, 1, "nn.ReLU6", relu6, false, threads, rng,
                         "stride 2 pad 1, odd size, batch 2 -> ReLU6" + on);
    checkExpandDepthwise(1, 6, 60, 96, 50, 2, 0, "nn.SiLU", silu, false, threads, rng,
                         "stride 2 pad 0 -> SiLU" + on);
    checkExpandDepthwise(1, 4, 64, 66, 64, 1, 2, "nn.ReLU6", relu6, true, threads, rng,
                         "stride 1 pad 2, the 1x1 output also a model output" + on);
  }
}
} // namespace

TEST_CASE("kernel: a 1x1 layer and the depthwise layer after it, in bands of rows") {
  checkBands();
}

TEST_CASE("kernel: the banded pair on the emulated AVX-512 micro-kernels") {
  // Bands run only where the table has the masked depthwise loop: on this
  // table on any core (on the real one on AVX-512 cores).
  test::ScopedEmulatedAvx512 emulated;
  checkBands();
}

TEST_CASE("kernel: 3x3 depthwise with padding 1 read in place, 24 columns and wider") {
  // Planes from 24 columns are read where they lie: rows outside the plane
  // read as zeros, the first output (and the last at stride 1) sum their
  // taps one by one, the rest go 8 at a time with an overlapping last step.
  std::mt19937 rng(1626);
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    checkConv({1, 3, 5, 24, 3, 3, 1, 1, 1, 3, true}, rng, "stride 1, W 24" + on, kAtol, kRtol,
              threads);
    checkConv({2, 4, 4, 33, 4, 3, 1, 1, 1, 4, false}, rng, "stride 1, W 33, batch 2" + on, kAtol,
              kRtol, threads);
    checkConv({1, 3, 1, 40, 3, 3, 1, 1, 1, 3, true}, rng, "stride 1, one row" + on, kAtol, kRtol,
              threads);
    // Stride 2: even and odd widths and heights (an odd height's last
    // output row reads the zero row below the plane).
    checkConv({1, 3, 7, 24, 3, 3, 2, 1, 1, 3, true}, rng, "stride 2, W 24, H 7" + on, kAtol,
              kRtol, threads);
    checkConv({1, 5, 6, 25, 5, 3, 2, 1, 1, 5, false}, rng, "stride 2, W 25, H 6" + on, kAtol,
              kRtol, threads);
    checkConv({2, 3, 9, 58, 3, 3, 2, 1, 1, 3, true}, rng, "stride 2, W 58, batch 2" + on, kAtol,
              kRtol, threads);
    ConvSpec wide{1, 6, 8, 41, 6, 3, 1, 1, 1, 6, true};
    checkConvActivation(wide, "nn.ReLU6", {}, relu6, rng, "stride 1 -> ReLU6" + on, kAtol, kRtol,
                        threads);
    checkConvActivation(wide, "nn.SiLU", {}, silu, rng, "stride 1 -> SiLU" + on, kAtol, kRtol,
                        threads);
    ConvSpec wide2{1, 6, 9, 43, 6, 3, 2, 1, 1, 6, true};
    checkConvActivation(wide2, "nn.ReLU6", {}, relu6, rng, "stride 2 -> ReLU6" + on, kAtol, kRtol,
                        threads);
    checkConvActivation(wide2, "nn.SiLU", {}, silu, rng, "stride 2 -> SiLU" + on, kAtol, kRtol,
                        threads);
  }
}

namespace {
void checkMaskedDepthwise() {
  // With AVX-512, 3x3 depthwise layers whose rows have more than 8 outputs
  // run 16 outputs a step, loads masked where a step leaves the row: rows
  // of exactly 2 and 4 steps, a last step of 1 lane, padding 0, 1 and 2 on
  // either side, stride 1 and 2. (With AVX2 they take the 8-lane loops.)
  std::mt19937 rng(1627);
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  checkConv({1, 3, 6, 64, 3, 3, 1, 1, 1, 3, true}, rng, "stride 1 pad 1, W 64 (4 steps)");
  checkConv({1, 3, 5, 30, 3, 3, 1, 2, 1, 3, false}, rng, "stride 1 pad 2, W 30 (32 outputs)");
  checkConv({2, 2, 4, 19, 2, 3, 1, 0, 1, 2, true}, rng, "stride 1 pad 0, W 19 (17 outputs)");
  checkConv({1, 3, 7, 112, 3, 3, 2, 1, 1, 3, true}, rng, "stride 2 pad 1, W 112 (56 outputs)");
  checkConv({1, 3, 6, 40, 3, 3, 2, 2, 1, 3, true}, rng, "stride 2 pad 2, W 40 (21 outputs)");
  checkConv({1, 2, 3, 35, 2, 3, 2, 0, 1, 2, false}, rng, "stride 2 pad 0, W 35, one output row");
  checkConvActivation({1, 4, 9, 33, 4, 3, 2, 1, 1, 4, true}, "nn.ReLU6", {}, relu6, rng,
                      "stride 2 pad 1, W 33 -> ReLU6");
  // Small planes run a vector of channels at a time: blocks within one
  // image (5 channels, batch 2), planes narrower than a vector, and 200
  // channels (12 blocks of 16 and one of 8) with an activation applied to
  // each block's planes after it.
  auto hardswish = [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; };
  checkConv({2, 5, 7, 7, 5, 3, 1, 1, 1, 5, true}, rng, "packed, 7x7, 5 channels, batch 2");
  checkConv({1, 5, 6, 4, 5, 3, 1, 1, 1, 5, false}, rng, "packed, 6x4");
  checkConv({1, 3, 9, 1, 3, 3, 1, 1, 1, 3, true}, rng, "packed, 9x1");
  for (int threads : {1, 2})
    checkConvActivation({1, 200, 7, 7, 200, 3, 1, 1, 1, 200, true}, "nn.Hardswish", {}, hardswish,
                        rng, "packed, 200 planes -> Hardswish on " + std::to_string(threads), kAtol,
                        kRtol, threads);
}
} // namespace

// Kernels other than 3x3 and 3x3 layers on short rows run a vector of
// channels at a time: channel counts past a block's (37 = 2 x 16 + 5, and
// batch 2, whose blocks never span images), stride 2, dilation, kernels
// wider than tall, on 1 and 2 threads; SiLU, which the loop leaves to a
// pass over each block's planes.
TEST_CASE("kernel: depthwise layers a vector of channels at a time") {
  std::mt19937 rng(1517);
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    checkConv({2, 37, 7, 7, 37, 5, 1, 2, 1, 37, true}, rng, "5x5 on 7x7, 37 channels" + on, kAtol,
              kRtol, threads);
    checkConv({1, 21, 14, 14, 21, 3, 2, 1, 1, 21, true}, rng, "3x3 stride 2, 21 channels" + on,
              kAtol, kRtol, threads);
    checkConv({1, 19, 15, 13, 19, 7, 1, 3, 1, 19, false}, rng, "7x7 on 15x13" + on, kAtol, kRtol,
              threads);
    checkConv({1, 18, 11, 9, 18, 3, 1, 2, 2, 18, true}, rng, "3x3 dilation 2" + on, kAtol, kRtol,
              threads);
    checkConv({1, 17, 28, 30, 17, 5, 2, 2, 1, 17, true}, rng, "5x5 stride 2 on 28x30" + on, kAtol,
              kRtol, threads);
    checkConvActivation({2, 20, 9, 9, 20, 5, 1, 2, 1, 20, true}, "nn.SiLU", {}, silu, rng,
                        "5x5 -> SiLU" + on, kAtol, kRtol, threads);
  }
}

TEST_CASE("kernel: 3x3 depthwise 16 outputs a step (AVX-512), any padding") {
  checkMaskedDepthwise();
}

TEST_CASE("kernel: 3x3 depthwise on the emulated AVX-512 micro-kernels") {
  test::ScopedEmulatedAvx512 emulated;
  checkMaskedDepthwise();
}

TEST_CASE("kernel: Winograd on 1 and 2 threads, with fused activations") {
  // 30x27 outputs are 8 x 7 = 56 tiles with partial ones at the right and
  // bottom, a last group of 8 tiles that is partial, and 20 output
  // channels (a partial panel). Bias and activation are applied over the
  // output planes after the transform.
  ConvSpec s{1, 32, 30, 27, 20, 3, 1, 1, 1, 1, true};
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    std::mt19937 rng(1624);
    checkConv(s, rng, "3x3 32->20 on 30x27 (Winograd)" + on, 1e-4, 1e-4, threads);
    checkConvActivation(s, "nn.SiLU", {}, silu, rng, "Winograd -> SiLU" + on, 1e-4, 1e-4,
                        threads);
    checkConvActivation(s, "nn.ReLU6", {}, relu6, rng, "Winograd -> ReLU6" + on, 1e-4, 1e-4,
                        threads);
  }
}

TEST_CASE("kernel: Winograd in bands of tile rows on large planes") {
  // Planes whose transformed tiles pass 4 MB run bands of tile rows, each
  // on one thread: 16->20 on 121x118 (31 x 30 tiles, 156 KB of V and M a
  // tile row: 6 bands of 5 or 6 rows), the top band's padding read as
  // zeros, the bottom one's rows past the input too; without padding, on
  // 124x127, batch 2.
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  const EpilogueExpr residual{"  %0 = add(%c, %r) : $T\n  return %0", true, false,
                              [](double c, double r) { return c + r; }};
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    std::mt19937 rng(2712);
    ConvSpec padded{1, 16, 121, 118, 20, 3, 1, 1, 1, 1, true};
    ConvSpec unpadded{2, 16, 124, 127, 16, 3, 1, 0, 1, 1, true};
    checkConv(padded, rng, "3x3 16->20 on 121x118 (Winograd bands)" + on, 1e-4, 1e-4, threads);
    checkConv(unpadded, rng, "3x3 16->16 on 124x127 unpadded, batch 2 (Winograd bands)" + on, 1e-4,
              1e-4, threads);
    checkConvActivation(padded, "nn.SiLU", {}, silu, rng, "Winograd bands -> SiLU" + on, 1e-4, 1e-4,
                        threads);
    checkConvEpilogue(unpadded, residual, "", nullptr, true, rng, "Winograd bands, + r" + on,
                      threads, 1e-4, 1e-4);
  }
}

TEST_CASE("kernel: Winograd F(2x2, 3x3) on small planes of deep layers") {
  // Planes of at most 256 outputs that F(4x4, 3x3) leaves: 7x7 (16 tiles, the last row and column
  // of each half used), batch 2; no padding on 5x6 (3x4 outputs); 72 outputs (a partial panel); a
  // fused activation, and a residual sum, on 2 threads.
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  const EpilogueExpr residual{"  %0 = add(%c, %r) : $T\n  return %0", true, false,
                              [](double c, double r) { return c + r; }};
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    std::mt19937 rng(2303);
    ConvSpec square{2, 64, 7, 7, 64, 3, 1, 1, 1, 1, true};
    ConvSpec unpadded{1, 80, 5, 6, 72, 3, 1, 0, 1, 1, false};
    checkConv(square, rng, "3x3 64->64 on 7x7, batch 2 (F(2x2))" + on, 1e-4, 1e-4, threads);
    checkConv(unpadded, rng, "3x3 80->72 on 5x6 unpadded (F(2x2))" + on, 1e-4, 1e-4, threads);
    checkConvActivation(square, "nn.ReLU6", {}, relu6, rng, "F(2x2) -> ReLU6" + on, 1e-4, 1e-4,
                        threads);
    checkConvEpilogue(unpadded, residual, "", nullptr, true, rng, "F(2x2), + r" + on, threads, 1e-4,
                      1e-4);
  }
}

TEST_CASE("kernel: nn.LeakyReLU after nn.Conv2d, fused and not fused") {
  std::mt19937 rng(1819);
  checkConvActivation({1, 3, 5, 5, 4, 3, 1, 1, 1, 1, true}, "nn.LeakyReLU",
                      {{"negative_slope", AttrValue::real(0.2)}},
                      [](double v) { return v > 0 ? v : 0.2 * v; }, rng, "3x3 conv -> LeakyReLU");
}

TEST_CASE("kernel: 1x1 nn.Conv2d on the strip kernel, with fused activations") {
  // Pointwise layers run on kc's 6x16 kernel, bias and clamps applied in
  // registers, other activations over each stored tile. 20 output channels
  // are three strips of 6 and one of 2; 13x13 = 169 columns are two blocks
  // of 64, then two tiles of 16 and a tail of 9. 64 input channels make
  // outputs of magnitude ~3, so ReLU6's upper clamp is reached.
  std::mt19937 rng(1820);
  ConvSpec s{2, 64, 13, 13, 20, 1, 1, 0, 1, 1, true};
  checkConv(s, rng, "1x1 64->20 on 13x13, batch 2");
  checkConv({1, 7, 8, 8, 6, 1, 1, 0, 1, 1, false}, rng, "1x1 7->6 on 8x8, no bias");
  checkConvActivation(s, "nn.ReLU6", {}, [](double v) { return std::min(std::max(v, 0.0), 6.0); },
                      rng, "1x1 -> ReLU6");
  checkConvActivation(s, "nn.ReLU", {}, [](double v) { return std::max(v, 0.0); }, rng,
                      "1x1 -> ReLU");
  checkConvActivation(s, "nn.LeakyReLU", {{"negative_slope", AttrValue::real(0.1)}},
                      [](double v) { return v > 0 ? v : 0.1 * v; }, rng, "1x1 -> LeakyReLU");
}

TEST_CASE("kernel: squeeze-and-excitation's 1x1 layers on 1x1 planes") {
  // Few columns on the panel kernel: a strip of 6 holding them, read ahead
  // into L2, and bias and activation over the column of outputs at once.
  // 1536 -> 64 -> 1536 as in efficientnet_v2_s; 37 outputs end a panel
  // short.
  std::mt19937 rng(2707);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  checkConvActivation({1, 1536, 1, 1, 64, 1, 1, 0, 1, 1, true}, "nn.SiLU", {}, silu, rng,
                      "1x1 1536->64 on 1x1 -> SiLU");
  checkConvActivation({1, 64, 1, 1, 1536, 1, 1, 0, 1, 1, true}, "nn.Sigmoid", {}, sigmoid, rng,
                      "1x1 64->1536 on 1x1 -> Sigmoid");
  checkConvActivation(
      {3, 50, 1, 1, 37, 1, 1, 0, 1, 1, true}, "nn.ReLU", {},
      [](double v) { return std::max(v, 0.0); }, rng, "1x1 50->37 on 1x1, batch 3 -> ReLU");
  checkConv({2, 50, 1, 1, 37, 1, 1, 0, 1, 1, false}, rng, "1x1 50->37 on 1x1, no bias");
  // 2x2 planes: one strip of 4 columns and 2 of zeros.
  checkConv({2, 50, 2, 2, 37, 1, 1, 0, 1, 1, true}, rng, "1x1 50->37 on 2x2");
}

TEST_CASE("kernel: nn.Conv2d on the strip kernel, patches gathered per block") {
  // Convolutions with at least 8 output channels per group gather their
  // patches 64 output positions at a time, runs of a block crossing output
  // rows; the activation is applied in registers before the store.
  std::mt19937 rng(1821);
  // 11x13 outputs: blocks of 64, 64 and 15 columns, none aligned to a row.
  ConvSpec plain{2, 6, 11, 13, 10, 3, 1, 1, 1, 1, true};
  checkConv(plain, rng, "3x3 pad 1, 6->10 on 11x13, batch 2");
  checkConv({1, 4, 15, 17, 16, 3, 2, 1, 2, 2, false}, rng,
            "3x3 stride 2 dilation 2 groups 2 (8 per group)");
  checkConv({1, 3, 20, 30, 9, 5, 3, 2, 1, 1, true}, rng, "5x5 stride 3 pad 2");
  // Stride 2 reads input rows split into even and odd columns; odd widths
  // give the two halves different lengths.
  checkConv({1, 5, 11, 23, 12, 3, 2, 1, 1, 1, true}, rng, "3x3 stride 2 pad 1 on 11x23");
  checkConv({1, 3, 20, 21, 16, 6, 2, 2, 1, 1, true}, rng, "6x6 stride 2 pad 2 on 20x21");
  checkConv({1, 2, 3, 40, 8, 7, 1, 5, 1, 1, true}, rng, "7x7 pad 5 wider than the input rows");
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  checkConvActivation(plain, "nn.SiLU", {}, silu, rng, "3x3 -> SiLU");
  checkConvActivation({1, 16, 9, 9, 12, 1, 1, 0, 1, 1, true}, "nn.SiLU", {}, silu, rng,
                      "1x1 -> SiLU");
  checkConvActivation(plain, "nn.Hardswish", {},
                      [](double v) { return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; },
                      rng, "3x3 -> Hardswish");
  checkConvActivation(plain, "nn.Sigmoid", {}, [](double v) { return 1.0 / (1.0 + std::exp(-v)); },
                      rng, "3x3 -> Sigmoid");
}

TEST_CASE("kernel: the strip kernel's work shared over 2 and 3 threads") {
  // 14x14 outputs are four blocks of columns (64, 64, 64, 4); shared out as
  // whole blocks they leave threads uneven, so the output channels are
  // split into groups of strips as well, the last group shorter: 40
  // channels are 7 strips (the last of 4 rows), 99 are 17. Every output
  // is compared, whichever thread computed it.
  std::mt19937 rng(1825);
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  for (int threads : {2, 3}) {
    std::string on = " on " + std::to_string(threads) + " threads";
    checkConv({1, 16, 14, 14, 40, 1, 1, 0, 1, 1, true}, rng, "1x1 16->40 on 14x14" + on, kAtol,
              kRtol, threads);
    checkConvActivation({1, 24, 14, 14, 99, 1, 1, 0, 1, 1, true}, "nn.ReLU6", {}, relu6, rng,
                        "1x1 24->99 on 14x14 -> ReLU6" + on, kAtol, kRtol, threads);
    checkConv({1, 8, 30, 26, 20, 3, 2, 1, 1, 1, true}, rng, "3x3 stride 2 8->20 on 15x13" + on,
              kAtol, kRtol, threads);
  }
}

TEST_CASE("kernel: depthwise nn.Conv2d with fused activations") {
  // The loops clamp for ReLU/ReLU6 and other activations run over a
  // task's stored planes: negative sums must reach SiLU unclamped.
  std::mt19937 rng(1516);
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  auto hardswish = [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; };
  for (int64_t stride : {1, 2}) {
    ConvSpec dw{1, 6, 10, 21, 6, 3, stride, 1, 1, 6, true};
    std::string what = "depthwise 3x3 stride " + std::to_string(stride);
    checkConvActivation(dw, "nn.SiLU", {}, silu, rng, what + " -> SiLU");
    checkConvActivation(dw, "nn.ReLU6", {}, relu6, rng, what + " -> ReLU6");
  }
  // Small planes take many planes a task, the last task shorter; batch 2
  // makes planes of one channel land in two tasks. Every loop: 3x3 short
  // rows, 3x3 read in place (24 columns), 5x5 on the padded plane, and the
  // generic loop at stride 3 (which clamps nothing itself).
  struct Case {
    ConvSpec s;
    const char *what;
  };
  for (int threads : {1, 2})
    for (const Case &c : {Case{{2, 37, 7, 7, 37, 3, 1, 1, 1, 37, true}, "3x3 on 7x7"},
                          Case{{2, 19, 5, 24, 19, 3, 2, 1, 1, 19, true}, "3x3 stride 2, W 24"},
                          Case{{2, 41, 7, 7, 41, 5, 1, 2, 1, 41, true}, "5x5 on 7x7"},
                          Case{{2, 13, 9, 9, 13, 5, 3, 2, 1, 13, false}, "5x5 stride 3"}}) {
      std::string what =
          std::string("depthwise ") + c.what + " on " + std::to_string(threads) + " thread(s)";
      checkConvActivation(c.s, "nn.SiLU", {}, silu, rng, what + " -> SiLU", kAtol, kRtol, threads);
      checkConvActivation(c.s, "nn.Hardswish", {}, hardswish, rng, what + " -> Hardswish", kAtol,
                          kRtol, threads);
      checkConvActivation(c.s, "nn.ReLU6", {}, relu6, rng, what + " -> ReLU6", kAtol, kRtol,
                          threads);
    }
}

TEST_CASE("kernel: nn.SiLU and nn.Sigmoid over the whole float range, alone and fused") {
  // Both run on kc's own vectorizable exp; it is held to 1e-6 relative
  // error (~8 ulp) against exp in double, from -100 to 100, where the
  // results span 1e-44 to 100.
  Dims in{1, 4001};
  std::vector<float> x(4001);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = -100.f + 0.05f * float(i);
  std::vector<double> sig, silu;
  for (float v : x) {
    double s = 1.0 / (1.0 + std::exp(-double(v)));
    sig.push_back(s);
    silu.push_back(double(v) * s);
  }
  expectClose(runOneOp(in, x, "nn.Sigmoid(%x)", in), in, sig, "sigmoid", 1e-30, 1e-6);
  expectClose(runOneOp(in, x, "nn.SiLU(%x)", in), in, silu, "silu", 1e-30, 1e-6);

  // As a convolution's epilogue: a 1x1 convolution with weight 1 passes x
  // through, so the fused activation sees the same sweep.
  Dims cin{1, 1, 1, 4001};
  for (const char *op : {"nn.SiLU", "nn.Sigmoid"}) {
    auto conv = weightedOp("nn.Conv2d", cin,
                           {{"in_channels", i64(1)},
                            {"out_channels", i64(1)},
                            {"kernel_size", ints({1, 1})},
                            {"stride", ints({1, 1})},
                            {"padding", ints({0, 0})},
                            {"dilation", ints({1, 1})},
                            {"groups", i64(1)},
                            {"bias", flag(false)}},
                           {{"weight", {1, 1, 1, 1}, {1.f}}}, cin);
    ModulePtr m = withActivation(conv, op, {}, cin);
    expectClose(runModule(*m, {tensorOf(cin, x)})[0], cin,
                std::string(op) == "nn.SiLU" ? silu : sig, std::string(op) + " fused", 1e-30,
                1e-6);
  }
}

//===----------------------------------------------------------------------===//
// Resampling
//===----------------------------------------------------------------------===//

namespace {
/// Bilinear reference with PyTorch's source coordinates: align_corners=False
/// src = (dst + 0.5) * ratio - 0.5 clamped at 0 (ratio = in/out, or
/// 1/scale_factor); True: src = dst * (in-1)/(out-1).
double srcCoord(int64_t dst, int64_t in, int64_t out, double ratio, bool align) {
  if (align)
    return out > 1 ? double(dst) * double(in - 1) / double(out - 1) : 0.0;
  return std::max((double(dst) + 0.5) * ratio - 0.5, 0.0);
}

std::vector<double> bilinearRef(const Dims &in, const std::vector<float> &x, int64_t OH,
                                int64_t OW, bool align, double rh, double rw) {
  int64_t P = in[0] * in[1], H = in[2], W = in[3];
  std::vector<double> r;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double sh = srcCoord(oh, H, OH, rh, align), sw = srcCoord(ow, W, OW, rw, align);
        int64_t h0 = std::min<int64_t>(int64_t(std::floor(sh)), H - 1), h1 = std::min(h0 + 1, H - 1);
        int64_t w0 = std::min<int64_t>(int64_t(std::floor(sw)), W - 1), w1 = std::min(w0 + 1, W - 1);
        double lh = sh - double(h0), lw = sw - double(w0);
        auto at = [&](int64_t h, int64_t w) { return double(x[size_t((p * H + h) * W + w)]); };
        r.push_back((1 - lh) * ((1 - lw) * at(h0, w0) + lw * at(h0, w1)) +
                    lh * ((1 - lw) * at(h1, w0) + lw * at(h1, w1)));
      }
  return r;
}
} // namespace

TEST_CASE("kernel: nn.Upsample nearest and bilinear") {
  std::mt19937 rng(1919);
  const Dims in{1, 2, 3, 4};
  auto x = uniform(rng, count(in));
  SUBCASE("nearest x2") {
    Dims out{1, 2, 6, 8};
    auto got = runOneOp(in, x, "nn.Upsample(%x) {mode=\"nearest\", scale_factor=[2.0,2.0]}", out);
    expectClose(got, out,
                gather(in, x, out,
                       [](const Dims &o) { return Dims{o[0], o[1], o[2] / 2, o[3] / 2}; }),
                "nearest x2");
  }
  SUBCASE("nearest to size 5x7") {
    // PyTorch 'nearest': src = floor(dst * in / out).
    Dims out{1, 2, 5, 7};
    auto got = runOneOp(in, x, "nn.Upsample(%x) {mode=\"nearest\", size=[5,7]}", out);
    expectClose(got, out, gather(in, x, out, [](const Dims &o) {
                  return Dims{o[0], o[1], int64_t(std::floor(o[2] * 3.0 / 5.0)),
                              int64_t(std::floor(o[3] * 4.0 / 7.0))};
                }),
                "nearest size");
  }
  SUBCASE("bilinear x2 align_corners=false") {
    Dims out{1, 2, 6, 8};
    auto got = runOneOp(
        in, x, "nn.Upsample(%x) {align_corners=false, mode=\"bilinear\", scale_factor=[2.0,2.0]}",
        out);
    expectClose(got, out, bilinearRef(in, x, 6, 8, false, 0.5, 0.5), "bilinear x2");
  }
  SUBCASE("bilinear x2 align_corners=true") {
    Dims out{1, 2, 6, 8};
    auto got = runOneOp(
        in, x, "nn.Upsample(%x) {align_corners=true, mode=\"bilinear\", scale_factor=[2.0,2.0]}",
        out);
    expectClose(got, out, bilinearRef(in, x, 6, 8, true, 0.5, 0.5), "bilinear x2 align");
  }
  SUBCASE("bilinear to size 5x7, align_corners false and true") {
    Dims out{1, 2, 5, 7};
    auto f = runOneOp(in, x, "nn.Upsample(%x) {align_corners=false, mode=\"bilinear\", size=[5,7]}",
                      out);
    expectClose(f, out, bilinearRef(in, x, 5, 7, false, 3.0 / 5.0, 4.0 / 7.0), "bilinear size");
    auto t = runOneOp(in, x, "nn.Upsample(%x) {align_corners=true, mode=\"bilinear\", size=[5,7]}",
                      out);
    expectClose(t, out, bilinearRef(in, x, 5, 7, true, 0, 0), "bilinear size align");
  }
  SUBCASE("planes of 13x37: x2, x3 and down to 5x9") {
    // x2 takes the doubling loops over each row's inside (the first and
    // last two outputs from the table); x3 and shrinking take the table,
    // and shrinking skips source rows the two-row cache must not serve.
    const Dims big{1, 3, 13, 37};
    auto xb = uniform(rng, count(big));
    for (bool align : {false, true}) {
      std::string a = align ? "true" : "false";
      Dims o2{1, 3, 26, 74}, o3{1, 3, 39, 111}, o5{1, 3, 5, 9};
      expectClose(runOneOp(big, xb,
                           "nn.Upsample(%x) {align_corners=" + a +
                               ", mode=\"bilinear\", scale_factor=[2.0,2.0]}",
                           o2),
                  o2, bilinearRef(big, xb, 26, 74, align, 0.5, 0.5), "bilinear x2 13x37 " + a);
      expectClose(runOneOp(big, xb,
                           "nn.Upsample(%x) {align_corners=" + a +
                               ", mode=\"bilinear\", scale_factor=[3.0,3.0]}",
                           o3),
                  o3, bilinearRef(big, xb, 39, 111, align, 1.0 / 3, 1.0 / 3),
                  "bilinear x3 13x37 " + a);
      expectClose(
          runOneOp(big, xb,
                   "nn.Upsample(%x) {align_corners=" + a + ", mode=\"bilinear\", size=[5,9]}", o5),
          o5, bilinearRef(big, xb, 5, 9, align, 13.0 / 5, 37.0 / 9), "bilinear down 5x9 " + a);
    }
    Dims o2{1, 3, 26, 74};
    expectClose(runOneOp(big, xb, "nn.Upsample(%x) {mode=\"nearest\", scale_factor=[2.0,2.0]}", o2),
                o2,
                gather(big, xb, o2,
                       [](const Dims &o) {
                         return Dims{o[0], o[1], o[2] / 2, o[3] / 2};
                       }),
                "nearest x2 13x37");
  }
  SUBCASE("bilinear x2 on rows of 2048 and 2049") {
    // Each thread blends two source rows into its slice of the workspace,
    // as wide as a row: wide rows as well as narrow ones.
    for (int64_t W : {2048, 2049}) {
      const Dims wide{1, 1, 3, W};
      auto xw = uniform(rng, count(wide));
      Dims out{1, 1, 6, 2 * W};
      auto got = runOneOp(
          wide, xw,
          "nn.Upsample(%x) {align_corners=false, mode=\"bilinear\", scale_factor=[2.0,2.0]}", out);
      expectClose(got, out, bilinearRef(wide, xw, 6, 2 * W, false, 0.5, 0.5),
                  "bilinear x2, width " + std::to_string(W));
    }
  }
}

//===----------------------------------------------------------------------===//
// Matmul, softmax, activations
//===----------------------------------------------------------------------===//

TEST_CASE("kernel: torch.matmul with broadcast batch dims and 1-d operands") {
  std::mt19937 rng(2020);
  auto runMM = [&](const Dims &sa, const Dims &sb, const Dims &out, std::vector<float> &a,
                   std::vector<float> &b) {
    a = uniform(rng, count(sa));
    b = uniform(rng, count(sb));
    ModulePtr m = parseTyped(oneOpText({{"a", sa}, {"b", sb}}, "torch.matmul(%a, %b)", out));
    return runModule(*m, {tensorOf(sa, a), tensorOf(sb, b)})[0];
  };
  std::vector<float> a, b;
  SUBCASE("[2,1,3,4] @ [5,4,2] -> [2,5,3,2]") {
    Dims out{2, 5, 3, 2};
    auto got = runMM({2, 1, 3, 4}, {5, 4, 2}, out, a, b);
    std::vector<double> ref;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 5; ++j)
        for (int64_t m = 0; m < 3; ++m)
          for (int64_t n = 0; n < 2; ++n) {
            double acc = 0;
            for (int64_t k = 0; k < 4; ++k)
              acc += double(a[size_t(((i * 1 + 0) * 3 + m) * 4 + k)]) *
                     double(b[size_t((j * 4 + k) * 2 + n)]);
            ref.push_back(acc);
          }
    expectClose(got, out, ref, "broadcast batch");
  }
  SUBCASE("[4] @ [2,4,3] -> [2,3]") {
    Dims out{2, 3};
    auto got = runMM({4}, {2, 4, 3}, out, a, b);
    std::vector<double> ref;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t n = 0; n < 3; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k)
          acc += double(a[size_t(k)]) * double(b[size_t((i * 4 + k) * 3 + n)]);
        ref.push_back(acc);
      }
    expectClose(got, out, ref, "vector @ batch");
  }
  SUBCASE("[2,3,4] @ [4] -> [2,3]") {
    Dims out{2, 3};
    auto got = runMM({2, 3, 4}, {4}, out, a, b);
    std::vector<double> ref;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t m = 0; m < 3; ++m) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k)
          acc += double(a[size_t((i * 3 + m) * 4 + k)]) * double(b[size_t(k)]);
        ref.push_back(acc);
      }
    expectClose(got, out, ref, "batch @ vector");
  }
  SUBCASE("[4] @ [4] -> []") {
    Dims out{};
    auto got = runMM({4}, {4}, out, a, b);
    double acc = 0;
    for (size_t k = 0; k < 4; ++k)
      acc += double(a[k]) * double(b[k]);
    expectClose(got, out, {acc}, "dot");
  }
}

TEST_CASE("kernel: nn.Softmax over dim 1 of a 3-d tensor") {
  std::mt19937 rng(2121);
  const Dims in{2, 5, 3};
  auto x = uniform(rng, count(in), -3.f, 3.f);
  std::vector<double> ref(x.size());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 3; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < 5; ++j)
        sum += std::exp(double(x[size_t((i * 5 + j) * 3 + k)]));
      for (int64_t j = 0; j < 5; ++j)
        ref[size_t((i * 5 + j) * 3 + k)] = std::exp(double(x[size_t((i * 5 + j) * 3 + k)])) / sum;
    }
  expectClose(runOneOp(in, x, "nn.Softmax(%x) {dim=1}", in), in, ref, "softmax dim 1");
}

TEST_CASE("kernel: nn.GELU (erf and tanh) and nn.PReLU per channel") {
  std::mt19937 rng(2222);
  SUBCASE("GELU") {
    const Dims in{3, 7};
    auto x = uniform(rng, count(in), -4.f, 4.f);
    std::vector<double> ref;
    for (float v : x)
      ref.push_back(0.5 * v * (1.0 + std::erf(double(v) / std::sqrt(2.0))));
    expectClose(runOneOp(in, x, "nn.GELU(%x) {approximate=\"none\"}", in), in, ref, "gelu");
  }
  SUBCASE("GELU, approximate=tanh; other forms refused") {
    const Dims in{3, 7};
    auto x = uniform(rng, count(in), -4.f, 4.f);
    std::vector<double> ref;
    for (float f : x) {
      double v = f;
      ref.push_back(0.5 * v *
                    (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
    }
    expectClose(runOneOp(in, x, "nn.GELU(%x) {approximate=\"tanh\"}", in), in, ref, "gelu tanh");
    ModulePtr m = parseTyped(oneOpText({{"x", in}}, "nn.GELU(%x) {approximate=\"fast\"}", in));
    auto cm = rt::CompiledModel::compile(*m);
    REQUIRE(!cm);
    CHECK(llvm::toString(cm.takeError()).find("unknown approximate='fast'") != std::string::npos);
  }
  SUBCASE("PReLU, one slope per channel") {
    const Dims in{2, 3, 4, 4};
    auto x = uniform(rng, count(in));
    auto slope = uniform(rng, 3, 0.05f, 0.5f);
    ModulePtr m = weightedOp("nn.PReLU", in, {{"num_parameters", i64(3)}},
                             {{"weight", {3}, slope}}, in);
    std::vector<double> ref(x.size());
    for (int64_t i = 0; i < count(in); ++i) {
      double v = x[size_t(i)];
      ref[size_t(i)] = v > 0 ? v : double(slope[size_t(unflat(in, i)[1])]) * v;
    }
    expectClose(runModule(*m, {tensorOf(in, x)})[0], in, ref, "prelu");
  }
}

//===----------------------------------------------------------------------===//
// Expression functions
//===----------------------------------------------------------------------===//

TEST_CASE("kernel: expression function with broadcasting and a literal") {
  std::mt19937 rng(2323);
  const Dims sa{2, 3, 4}, sb{3, 1};
  auto a = uniform(rng, count(sa)), b = uniform(rng, count(sb));
  ModulePtr m = parseTyped(R"(fn @e(%0: f32[2,3,4], %1: f32[3,1]) -> f32[2,3,4] primitive {
  %2 = mul(%1, 2.5:f32) : f32[3,1]
  %3 = add(%0, %2) : f32[2,3,4]
  return %3
}

fn @main(%a: f32[2,3,4], %b: f32[3,1]) -> f32[2,3,4] {
  %0 = @e(%a, %b) : f32[2,3,4] name("pnnx_expr_0")
  return %0
}
)");
  std::vector<double> ref;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        ref.push_back(double(a[size_t((i * 3 + j) * 4 + k)]) + double(b[size_t(j)]) * 2.5);
  auto got = runModule(*m, {tensorOf(sa, a), tensorOf(sb, b)});
  expectClose(got[0], sa, ref, "a + b * 2.5");
}

//===----------------------------------------------------------------------===//
// Ops without a kernel
//===----------------------------------------------------------------------===//

TEST_CASE("kernel: an op without a kernel fails to compile, naming the op") {
  SUBCASE("nn.Conv3d") {
    ModulePtr m = parseTyped(R"(fn @main(%x: f32[1,1,4,4,4]) -> f32[1,2,2,2,2] {
  %0 = nn.Conv3d(%x, weight=@c.weight: f32[2,1,3,3,3]) {bias=false, in_channels=1, kernel_size=[3,3,3], out_channels=2} : f32[1,2,2,2,2] name("c")
  return %0
}
)");
    auto cm = rt::CompiledModel::compile(*m, {});
    REQUIRE_FALSE(bool(cm));
    std::string msg = llvm::toString(cm.takeError());
    CHECK_MESSAGE(msg.find("nn.Conv3d") != std::string::npos, msg);
  }
  SUBCASE("an unknown op") {
    ModulePtr m = parseTyped(R"(fn @main(%x: f32[2,3]) -> f32[2,3] {
  %0 = foo.Bar(%x) {alpha=1} : f32[2,3] name("mystery")
  return %0
}
)");
    auto cm = rt::CompiledModel::compile(*m, {});
    REQUIRE_FALSE(bool(cm));
    std::string msg = llvm::toString(cm.takeError());
    CHECK_MESSAGE(msg.find("foo.Bar") != std::string::npos, msg);
  }
}

TEST_CASE("kernel: grouped nn.Conv2d on the direct loop, every stride, tails and activations") {
  // Groups of at most 32 output channels run GroupedConv.cpp: input planes
  // padded (and split into phases at a stride above 1), outputs flattened
  // over the padded width. The shapes put a tile of 4 outputs partly past
  // a group's end (OCg 6, 10), odd and even sizes at strides 2 and 3 with
  // padding 0 to 2, dilation, batches, a last block of 1 to 3 vectors
  // (16 lanes), and regnet's and resnext's groups.
  std::mt19937 rng(2718);
  auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  for (int threads : {1, 2}) {
    std::string on = " on " + std::to_string(threads) + " thread(s)";
    const std::pair<ConvSpec, const char *> specs[] = {
        {{1, 160, 14, 14, 160, 3, 1, 1, 1, 10, true}, "regnet_x 14x14"},
        {{1, 64, 8, 8, 64, 3, 1, 1, 1, 8, false}, "resnext 8 a group"},
        {{2, 24, 11, 9, 30, 3, 1, 2, 2, 3, true}, "dilation 2, OCg 10, batch 2"},
        {{1, 64, 15, 13, 64, 3, 2, 1, 1, 8, false}, "stride 2, odd plane"},
        {{1, 32, 7, 7, 40, 3, 2, 0, 1, 4, true}, "stride 2, no padding"},
        {{1, 12, 17, 19, 18, 5, 3, 2, 1, 3, true}, "5x5 stride 3, OCg 6"},
        {{2, 8, 9, 10, 12, 4, 2, 1, 2, 2, true}, "4x4 stride 2 dilation 2"},
        {{1, 32, 11, 11, 32, 3, 1, 1, 1, 2, true}, "11x11, a last block of one vector"},
        {{1, 32, 12, 12, 32, 3, 1, 1, 1, 2, false}, "12x12, a last block of three vectors"},
        {{1, 16, 12, 11, 16, 5, 2, 2, 1, 2, true}, "5x5 stride 2, padding 2, odd width"},
        {{1, 16, 8, 8, 16, 3, 2, 0, 1, 2, true}, "stride 2, no padding, even width"},
    };
    for (const auto &[spec, what] : specs)
      checkConv(spec, rng, what + on, kAtol, kRtol, threads);
    ConvSpec grouped{1, 48, 9, 11, 48, 3, 1, 1, 1, 3, true};
    checkConvActivation(grouped, "nn.ReLU6", {}, relu6, rng, "stride 1 -> ReLU6" + on, kAtol, kRtol,
                        threads);
    ConvSpec grouped2{1, 48, 10, 11, 48, 3, 2, 1, 1, 6, true};
    checkConvActivation(grouped2, "nn.SiLU", {}, silu, rng, "stride 2 -> SiLU" + on, kAtol, kRtol,
                        threads);
  }
}

TEST_CASE("kernel: convolutions with uneven zero padding, as fold-pad writes it") {
  // padding=(before, after) pairs, last dim first: every planar algorithm
  // pads before and takes the output size from the type. Shapes picked to
  // reach Winograd, the panel, strip and OpenBLAS paths, the depthwise and
  // grouped loops, a 1-d and a 3-d convolution; the reference sums the
  // kernel over that padding directly.
  struct Case {
    Dims in, k;
    int64_t OC, groups, stride;
    std::vector<int64_t> pairs; // last dim first
    const char *what;
  };
  std::mt19937 rng(3141);
  for (const Case &c : {Case{{1, 16, 12, 12}, {3, 3}, 16, 1, 1, {0, 1, 1, 0}, "Winograd"},
                        Case{{1, 32, 9, 10}, {3, 3}, 20, 1, 1, {2, 0, 0, 2}, "panel (K 288)"},
                        Case{{1, 4, 9, 10}, {3, 3}, 8, 1, 2, {0, 1, 0, 1}, "strip, stride 2"},
                        Case{{1, 4, 9, 10}, {3, 3}, 4, 1, 2, {1, 0, 2, 1}, "OpenBLAS, 4 out"},
                        Case{{1, 8, 11, 20}, {3, 3}, 8, 8, 1, {0, 2, 1, 0}, "depthwise"},
                        Case{{2, 8, 9, 11}, {3, 3}, 12, 2, 2, {1, 2, 2, 1}, "grouped, stride 2"},
                        Case{{2, 4, 13}, {4}, 6, 1, 1, {3, 1}, "1-d"},
                        Case{{1, 2, 5, 6, 4}, {2, 3, 2}, 3, 1, 1, {1, 0, 0, 2, 2, 1}, "3-d"}}) {
    INFO(std::string(c.what));
    size_t n = c.k.size();
    int64_t C = c.in[1], G = c.groups, Cg = C / G, OCg = c.OC / G;
    Dims wshape{c.OC, Cg};
    wshape.insert(wshape.end(), c.k.begin(), c.k.end());
    // As 3 spatial dims: size, kernel, padding before, output size.
    Dims S(3, 1), K(3, 1), P(3, 0), O(3, 1);
    Dims out{c.in[0], c.OC};
    for (size_t i = 0; i < n; ++i) {
      int64_t before = c.pairs[2 * (n - 1 - i)], after = c.pairs[2 * (n - 1 - i) + 1];
      size_t d = 3 - n + i;
      S[d] = c.in[2 + i], K[d] = c.k[i], P[d] = before;
      O[d] = (S[d] + before + after - K[d]) / c.stride + 1;
      out.push_back(O[d]);
    }
    auto x = uniform(rng, count(c.in));
    auto w = uniform(rng, count(wshape));
    std::string op = n == 1 ? "nn.Conv1d" : n == 2 ? "nn.Conv2d" : "nn.Conv3d";
    ModulePtr m = weightedOp(op, c.in,
                             {{"in_channels", i64(C)},
                              {"out_channels", i64(c.OC)},
                              {"kernel_size", ints(c.k)},
                              {"stride", ints(Dims(n, c.stride))},
                              {"padding", ints(c.pairs)},
                              {"groups", i64(G)},
                              {"bias", flag(false)}},
                             {{"weight", wshape, w}}, out);
    int64_t s = c.stride;
    std::vector<double> ref;
    for (int64_t b = 0; b < c.in[0]; ++b)
      for (int64_t oc = 0; oc < c.OC; ++oc)
        for (int64_t o0 = 0; o0 < O[0]; ++o0)
          for (int64_t o1 = 0; o1 < O[1]; ++o1)
            for (int64_t o2 = 0; o2 < O[2]; ++o2) {
              double sum = 0;
              for (int64_t ic = oc / OCg * Cg; ic < (oc / OCg + 1) * Cg; ++ic)
                for (int64_t k0 = 0; k0 < K[0]; ++k0)
                  for (int64_t k1 = 0; k1 < K[1]; ++k1)
                    for (int64_t k2 = 0; k2 < K[2]; ++k2) {
                      int64_t i0 = (n == 3 ? o0 * s : o0) - P[0] + k0,
                              i1 = (n >= 2 ? o1 * s : o1) - P[1] + k1, i2 = o2 * s - P[2] + k2;
                      if (i0 < 0 || i0 >= S[0] || i1 < 0 || i1 >= S[1] || i2 < 0 || i2 >= S[2])
                        continue;
                      sum += double(x[(((b * C + ic) * S[0] + i0) * S[1] + i1) * S[2] + i2]) *
                             w[(((oc * Cg + ic % Cg) * K[0] + k0) * K[1] + k1) * K[2] + k2];
                    }
              ref.push_back(sum);
            }
    // Winograd's error grows with the channels (as in the 64 random shapes
    // above), float sums' with their depth: the panel case's 288 terms are
    // off by up to 5.5e-5 with even padding too.
    int64_t depth = Cg * count(c.k);
    double t = std::string(c.what) == "Winograd" ? std::max(1e-4, 5e-6 * double(C))
                                                 : kAtol * std::max(1.0, double(depth) / 16);
    expectCloseTwice(*m, tensorOf(c.in, x), out, ref, c.what, {}, t, t);
  }
}
