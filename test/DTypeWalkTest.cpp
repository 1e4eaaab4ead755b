//===- DTypeWalkTest.cpp - Every kernel with every element type -----------===//
//
// For every op fixture of test/ops/fixtures (which between them use every
// kernel kc registers) and every element type D but f32, the fixture's f32
// inputs are given type D: its `pnnx.Input` annotations say D, the other
// annotations are dropped so that types are inferred from D, and the
// inputs' values are converted to D (integers truncated, booleans x != 0).
// kc must then either refuse the model before it runs (with `?` dims: when
// its first run makes the plan), with an error naming a line and an element
// type, or compute what the f32 model computes on the
// same values, converted to the type of kc's result (exactly for integers
// and booleans; within 1e-4 + 1e-4·|b| for f32 and f64, 1e-2 + 1e-2·|b| for
// f16 and bf16). A kernel that read D's bytes as f32 would fail the second.
//
//===----------------------------------------------------------------------===//
#include "ModelFiles.h"
#include "ReferenceRun.h"

#include "kc/Import/Importer.h"
#include "kc/Support/Half.h"
#include "kc/Support/ZipArchive.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

using namespace kc;

namespace {

const DType kTypes[] = {DType::F64, DType::F16, DType::BF16, DType::I8,  DType::U8,
                        DType::I16, DType::I32, DType::I64,  DType::Bool};

uint16_t toBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return uint16_t((x + 0x8000u) >> 16);
}

float fromBf16(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// v as type t would hold it, back as a double.
double through(DType t, double v) {
  switch (t) {
  case DType::F32:
    return float(v);
  case DType::F64:
    return v;
  case DType::F16:
    return halfToFloat(floatToHalf(float(v)));
  case DType::BF16:
    return fromBf16(toBf16(float(v)));
  case DType::Bool:
    return v != 0;
  case DType::U8:
    return double(uint8_t(int64_t(std::trunc(v))));
  default:
    return std::trunc(v);
  }
}

void store(rt::Tensor &t, int64_t i, double v) {
  switch (t.dtype()) {
  case DType::F32:
    t.data<float>()[i] = float(v);
    break;
  case DType::F64:
    t.data<double>()[i] = v;
    break;
  case DType::F16:
    t.data<uint16_t>()[i] = floatToHalf(float(v));
    break;
  case DType::BF16:
    t.data<uint16_t>()[i] = toBf16(float(v));
    break;
  case DType::I8:
    t.data<int8_t>()[i] = int8_t(v);
    break;
  case DType::U8:
    t.data<uint8_t>()[i] = uint8_t(v);
    break;
  case DType::I16:
    t.data<int16_t>()[i] = int16_t(v);
    break;
  case DType::I32:
    t.data<int32_t>()[i] = int32_t(v);
    break;
  case DType::I64:
    t.data<int64_t>()[i] = int64_t(v);
    break;
  case DType::Bool:
    t.data<uint8_t>()[i] = v != 0;
    break;
  default:
    FAIL("no store for " << dtypeName(t.dtype()).str());
  }
}

double load(const rt::Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::F32:
    return t.data<float>()[i];
  case DType::F64:
    return t.data<double>()[i];
  case DType::F16:
    return halfToFloat(t.data<uint16_t>()[i]);
  case DType::BF16:
    return fromBf16(t.data<uint16_t>()[i]);
  case DType::I8:
    return t.data<int8_t>()[i];
  case DType::U8:
    return t.data<uint8_t>()[i];
  case DType::I16:
    return t.data<int16_t>()[i];
  case DType::I32:
    return t.data<int32_t>()[i];
  case DType::I64:
    return double(t.data<int64_t>()[i]);
  case DType::Bool:
    return t.data<uint8_t>()[i] != 0;
  default:
    FAIL("no load for " << dtypeName(t.dtype()).str());
  }
  return 0;
}

/// The fixture's param with every pnnx.Input annotated as `t` and every
/// other annotation dropped.
std::string retyped(llvm::StringRef param, DType t) {
  static const llvm::Regex annotation(" #[^ ]+=\\([^)]*\\)[a-z0-9]+");
  static const llvm::Regex inputType("(#[^ ]+=\\([^)]*\\))f32");
  std::string out;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  param.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    std::string l = line.str();
    if (line.startswith("pnnx.Input")) {
      l = inputType.sub(std::string("\\1") + dtypeName(t).str(), l);
    } else {
      for (std::string prev; prev != l;) {
        prev = l;
        l = annotation.sub("", l);
      }
    }
    out += l + "\n";
  }
  return out;
}

/// A refusal must say where and of what type.
bool namesLineAndType(const std::string &msg) {
  static const llvm::Regex line("(line [0-9]+|:[0-9]+:)");
  if (!line.match(msg))
    return false;
  for (DType t : kTypes)
    if (msg.find(dtypeName(t).str()) != std::string::npos)
      return true;
  return false;
}

struct Tally {
  int ran = 0, refused = 0, wrong = 0;
};

void walkFixture(const std::string &dir, Tally &tally) {
  auto paramBuf = llvm::MemoryBuffer::getFile(dir + "/model.pnnx.param");
  REQUIRE(bool(paramBuf));
  std::string param = (*paramBuf)->getBuffer().str();
  std::unique_ptr<ZipReader> zip;
  if (llvm::sys::fs::exists(dir + "/model.pnnx.bin")) {
    auto z = ZipReader::open(dir + "/model.pnnx.bin");
    REQUIRE_MESSAGE(bool(z), llvm::toString(z.takeError()));
    zip = std::move(*z);
  }
  std::vector<NpyArray> arrays;
  for (const std::string &p : test::numberedNpy(dir, "in")) {
    auto a = readNpy(p);
    REQUIRE(bool(a));
    arrays.push_back(std::move(*a));
  }
  auto original = test::loadForRun(dir + "/model.pnnx.param", test::RunConfig{});
  if (!original) { // refused at f32 already (test/ops/expectations.txt)
    llvm::consumeError(original.takeError());
    return;
  }
  auto f32Model = rt::CompiledModel::compile(**original);
  if (!f32Model) {
    llvm::consumeError(f32Model.takeError());
    return;
  }
  for (DType t : kTypes) {
    INFO(dir << " with " << dtypeName(t).str() << " inputs");
    // The inputs in type t, and the same values in f32 for the reference.
    std::vector<rt::Tensor> typed, asF32;
    for (const NpyArray &a : arrays) {
      rt::Tensor orig = test::tensorOf(a);
      if (orig.dtype() != DType::F32) {
        typed.push_back(orig);
        asF32.push_back(orig);
        continue;
      }
      rt::Tensor in = rt::Tensor::empty(t, orig.shape()),
                 ref = rt::Tensor::empty(DType::F32, orig.shape());
      for (int64_t i = 0; i < orig.numel(); ++i) {
        double v = through(t, orig.data<float>()[i]);
        store(in, i, v);
        ref.data<float>()[i] = float(v);
      }
      typed.push_back(in);
      asF32.push_back(ref);
    }
    auto want = (*f32Model)->run(asF32);
    if (!want) { // e.g. an index the conversion put out of range
      llvm::consumeError(want.takeError());
      continue;
    }
    auto refuse = [&](llvm::Error e) {
      std::string msg = llvm::toString(std::move(e));
      INFO(msg);
      CHECK(namesLineAndType(msg));
      ++tally.refused;
    };
    auto m = importPnnxFromBuffer(retyped(param, t), dir + "/model.pnnx.param", zip.get());
    REQUIRE_MESSAGE(bool(m), llvm::toString(m.takeError()));
    if (auto e = inferTypes(**m)) {
      refuse(std::move(e));
      continue;
    }
    auto cm = rt::CompiledModel::compile(**m);
    if (!cm) {
      refuse(cm.takeError());
      continue;
    }
    // With `?` dims the plan, and so the refusal, comes with the first run.
    bool deferred = (*cm)->numPlans() == 0;
    auto got = (*cm)->run(typed);
    if (!got && deferred) {
      refuse(got.takeError());
      continue;
    }
    REQUIRE_MESSAGE(bool(got), llvm::toString(got.takeError()));
    REQUIRE(got->size() == want->size());
    ++tally.ran;
    for (size_t o = 0; o < got->size(); ++o) {
      const rt::Tensor &g = (*got)[o], &ref = (*want)[o];
      REQUIRE(g.shape() == ref.shape());
      DType gt = g.dtype();
      bool lowPrecision = gt == DType::F16 || gt == DType::BF16;
      double tol = lowPrecision ? 1e-2 : 1e-4;
      int bad = 0;
      for (int64_t i = 0; i < g.numel(); ++i) {
        double a = load(g, i), b = through(gt, load(ref, i));
        bool same = isFloating(gt) ? (std::isnan(a) && std::isnan(b)) ||
                                         std::fabs(a - b) <= tol + tol * std::fabs(b)
                                   : a == b;
        bad += !same;
      }
      if (bad) {
        ++tally.wrong;
        FAIL_CHECK("output " << o << " (" << dtypeName(gt).str() << "): " << bad << " of "
                             << g.numel() << " values differ from the f32 model's");
      }
    }
  }
}

} // namespace

TEST_CASE("dtype walk: every op fixture with every element type runs right or is refused") {
  Tally tally;
  auto dirs = test::modelsIn(std::string(KC_SOURCE_DIR) + "/test/ops/fixtures");
  REQUIRE(dirs.size() > 400);
  for (const test::ModelFile &f : dirs)
    walkFixture(llvm::StringRef(f.param).rsplit('/').first.str(), tally);
  MESSAGE(dirs.size() << " fixtures x " << std::size(kTypes) << " element types: " << tally.ran
                      << " ran and matched the f32 model, " << tally.refused << " refused, "
                      << tally.wrong << " wrong");
  CHECK(tally.wrong == 0);
  CHECK(tally.ran > 0);
}
