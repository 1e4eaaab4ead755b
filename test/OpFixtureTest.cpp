//===- OpFixtureTest.cpp - Every op fixture agrees with PyTorch -----------===//
//
// test/ops/fixtures/<case>/ holds a tiny module converted by the real pnnx
// (test/ops/make_fixtures.py), its inputs and PyTorch's outputs. Each one
// runs as kc-run would run it: without passes, after -O, and after -O on
// one thread (kernels choose algorithms by thread count). Tolerance:
// |a - b| <= 1e-4 + 1e-4 * |b| elementwise for f32 and f16 (widened), exact
// for other dtypes, unless test/ops/expectations.txt widens it for a case,
// with the reason.
//
// A case expectations.txt marks `unsupported` must still import and type,
// and then fail to compile with an error naming the op it names and that
// op's line in the .param (never run as something else); one marked
// `dynamic` (pnnx wrote '?' dims) must fail for want of static shapes. One
// that runs fails the test too: its line is to be removed.
//
//===----------------------------------------------------------------------===//
#include "ModelFiles.h"
#include "ReferenceRun.h"
#include "TestFiles.h"

#include "kc/IR/Op.h"
#include "kc/Import/PnnxParam.h"
#include "kc/Runtime/OpKernel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <doctest/doctest.h>

#include <map>
#include <set>

using namespace kc;

namespace {

constexpr double kAtol = 1e-4, kRtol = 1e-4;

std::string opsDir() { return std::string(KC_SOURCE_DIR) + "/test/ops"; }

struct Expectation {
  std::string unsupportedOp; ///< empty: the case must run and match
  bool dynamic = false;      ///< '?' dims: refused for want of static shapes
  double atol = kAtol, rtol = kRtol;
};

/// Reads expectations.txt: `unsupported CASE OP: why`, `dynamic CASE: why`
/// and `tolerance CASE ATOL RTOL: why` lines, `#` comments.
std::map<std::string, Expectation> readExpectations() {
  std::map<std::string, Expectation> r;
  test::ListFile list(opsDir() + "/expectations.txt");
  for (const test::ListFile::Line &line : list.lines()) {
    INFO(list.path() << ":" << line.number << ": " << line.text.str());
    auto [head, why] = line.text.split(':');
    REQUIRE_MESSAGE(!why.trim().empty(), "each line ends with ': <reason>'");
    llvm::SmallVector<llvm::StringRef, 4> f;
    head.split(f, ' ', -1, false);
    REQUIRE(f.size() >= 2);
    Expectation &e = r[f[1].str()];
    if (f[0] == "dynamic" && f.size() == 2) {
      e.dynamic = true;
    } else if (f[0] == "unsupported" && f.size() == 3) {
      e.unsupportedOp = f[2].str();
    } else if (f[0] == "tolerance" && f.size() == 4) {
      REQUIRE(!f[2].getAsDouble(e.atol));
      REQUIRE(!f[3].getAsDouble(e.rtol));
    } else {
      FAIL("expected 'unsupported CASE OP: why', 'dynamic CASE: why' or "
           "'tolerance CASE ATOL RTOL: why'");
    }
  }
  return r;
}

/// The case names: the folders of test/ops/fixtures with a model.
std::vector<std::string> fixtureNames() {
  std::vector<std::string> names;
  for (const test::ModelFile &f : test::opFixtures())
    names.push_back(llvm::sys::path::filename(llvm::sys::path::parent_path(f.param)).str());
  return names;
}

/// The 1-based line of the first operator of type `op` in `param` (0 if
/// none) and how kc names that operator in errors: by its type (the op an
/// alias stands for), or for a pnnx.Expression by its name (the function
/// kc makes of it).
std::pair<unsigned, std::string> findOp(const std::string &param, llvm::StringRef op) {
  auto buf = llvm::MemoryBuffer::getFile(param);
  if (!buf)
    return {0, ""};
  llvm::SmallVector<llvm::StringRef, 0> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::SmallVector<llvm::StringRef, 8> f;
    lines[i].split(f, ' ', -1, false);
    if (f.size() < 2 || f[0] != op)
      continue;
    if (op == "pnnx.Expression")
      return {unsigned(i + 1), f[1].str()};
    const OpDef *d = OpRegistry::global().lookup(op);
    return {unsigned(i + 1), d ? d->name() : op.str()};
  }
  return {0, ""};
}

const test::RunConfig kConfigs[] = {{false, 0}, {true, 0}, {true, 1}};

/// An unsupported case imports, then fails to load or compile naming the
/// op and its line, in every configuration.
void checkRefused(const std::string &dir, const Expectation &e) {
  auto [line, name] = findOp(dir + "/model.pnnx.param", e.unsupportedOp);
  if (!line) {
    FAIL_CHECK(e.unsupportedOp << " does not occur in model.pnnx.param");
    return;
  }
  std::string where = name + " '";
  // Type errors say `FILE:LINE:COL: error:`, run-time errors `(line N)`.
  std::string at = "(line " + std::to_string(line) + ")";
  std::string atColumn = ":" + std::to_string(line) + ":";
  auto m = importPnnx(dir + "/model.pnnx.param");
  if (!m) {
    FAIL_CHECK("an unsupported op must still import: " << llvm::toString(m.takeError()));
    return;
  }
  for (const test::RunConfig &cfg : kConfigs) {
    INFO(test::describe(cfg));
    auto checks = test::runAgainstReference(dir, cfg, e.atol, e.rtol);
    if (checks) {
      FAIL_CHECK("listed as unsupported in expectations.txt, but it runs");
      return;
    }
    std::string msg = llvm::toString(checks.takeError());
    CHECK_MESSAGE((msg.find(where) != std::string::npos &&
                   (msg.find(at) != std::string::npos || msg.find(atColumn) != std::string::npos)),
                  "the error does not name " << where << "...' " << at << ": " << msg);
  }
}

/// A case with '?' dims imports, then, at its input's shape, fails to
/// compile naming the op it cannot run and its line, in every
/// configuration.
void checkDynamic(const std::string &dir) {
  auto m = importPnnx(dir + "/model.pnnx.param");
  if (!m) {
    FAIL_CHECK("a model with '?' dims must still import: " << llvm::toString(m.takeError()));
    return;
  }
  for (const test::RunConfig &cfg : kConfigs) {
    INFO(test::describe(cfg));
    auto checks = test::runAgainstReference(dir, cfg, kAtol, kRtol);
    if (checks) {
      FAIL_CHECK("listed as dynamic in expectations.txt, but it runs");
      return;
    }
    std::string msg = llvm::toString(checks.takeError());
    CHECK_MESSAGE((msg.find("at input shape") != std::string::npos &&
                   msg.find("(line ") != std::string::npos),
                  "unexpected error: " << msg);
  }
}

/// A supported case matches PyTorch in every configuration; returns the
/// worst |a-b|.
double checkMatches(const std::string &dir, const Expectation &e) {
  double worst = 0;
  for (const test::RunConfig &cfg : kConfigs) {
    INFO(test::describe(cfg));
    auto checks = test::runAgainstReference(dir, cfg, e.atol, e.rtol);
    if (!checks) {
      FAIL_CHECK(llvm::toString(checks.takeError()));
      return INFINITY;
    }
    for (size_t i = 0; i < checks->size(); ++i) {
      const test::OutputCheck &c = (*checks)[i];
      CHECK_MESSAGE(c.ok, "output " << i << ": " << c.why);
      worst = std::max(worst, c.worst);
    }
  }
  return worst;
}

/// Whether `v` is `dflt` as PyTorch means it: equal, or a list of that one
/// value (`dilation=(1,1)` for a default of 1), numbers compared by value.
bool isDefault(const AttrValue &v, const AttrValue &dflt) {
  if (v == dflt)
    return true;
  if (dflt.isNumber() && (v.isNumber() || v.isIntList() || v.isFloatList())) {
    auto vs = v.asFloatVector();
    return !vs.empty() && llvm::all_of(vs, [&](double x) { return x == dflt.getNumber(); });
  }
  return false;
}

/// Reads default-only.txt: `OP ATTR: why` lines, `#` comments.
std::map<std::pair<std::string, std::string>, std::string> readDefaultOnly() {
  std::map<std::pair<std::string, std::string>, std::string> r;
  test::ListFile list(opsDir() + "/default-only.txt");
  for (const test::ListFile::Line &line : list.lines()) {
    INFO(list.path() << ":" << line.number << ": " << line.text.str());
    auto [head, why] = line.text.split(':');
    llvm::SmallVector<llvm::StringRef, 4> f;
    head.split(f, ' ', -1, false);
    REQUIRE_MESSAGE((f.size() == 2 && !why.trim().empty()), "expected 'OP ATTR: why'");
    r[{f[0].str(), f[1].str()}] = why.trim().str();
  }
  return r;
}

} // namespace

/// For every op type kc runs, as pnnx writes it (`F.max_pool1d` apart from
/// `nn.MaxPool1d`), every attribute pnnx writes for it in the fixtures that
/// run, unless the registry (lib/IR/ops) makes it required, must take a
/// value other than its default in one of them: one besides the registered
/// default, or, where the registry's default is None or it registers none,
/// two different values (absent, None and an operand of that name count
/// as values). default-only.txt
/// lists the exceptions with the reason (PyTorch has no such variant, or
/// the value cannot change the result); a listed one that is pinned after
/// all fails too, so that the list stays true.
TEST_CASE("op fixtures: every attribute of every op kc runs is pinned in a non-default value") {
  auto expectations = readExpectations();
  auto allowed = readDefaultOnly();
  struct Seen {
    const OpDef *def;
    std::map<std::string, std::set<std::string>> values; ///< by attribute
    std::map<std::string, size_t> counted;               ///< calls seen with the key
    size_t calls = 0;
  };
  std::map<std::string, Seen> ops;
  for (const std::string &name : fixtureNames()) {
    auto it = expectations.find(name);
    if (it != expectations.end() && (it->second.dynamic || !it->second.unsupportedOp.empty()))
      continue;
    std::string path = opsDir() + "/fixtures/" + name + "/model.pnnx.param";
    auto buf = llvm::MemoryBuffer::getFile(path);
    REQUIRE(bool(buf));
    auto pf = parseParamFile((*buf)->getBuffer(), path);
    REQUIRE_MESSAGE(bool(pf), (pf ? "" : llvm::toString(pf.takeError())));
    for (const ParamOp &op : pf->ops) {
      const OpDef *d = OpRegistry::global().lookup(op.type);
      if (!d || !rt::KernelRegistry::global().lookup(d))
        continue;
      Seen &s = ops.try_emplace(op.type, Seen{d, {}, {}, 0}).first->second;
      ++s.calls;
      std::set<std::string> keys;
      for (auto &[k, v] : op.params)
        keys.insert(k);
      for (auto &[k, v] : s.values)
        keys.insert(k);
      for (const std::string &k : keys) {
        std::string v = "(absent)";
        if (const AttrValue *p = op.param(k))
          v = attrToString(*p);
        else if (llvm::is_contained(op.inputNames, k))
          v = "(operand)";
        const AttrSpec *spec = d->findAttr(k);
        if (spec && !spec->dflt.isNone() &&
            (v == "(absent)" || (op.param(k) && isDefault(*op.param(k), spec->dflt))))
          v = "(default)";
        else if (v == "(absent)" || v == "None")
          v = "None";
        s.values[k].insert(v);
        ++s.counted[k];
      }
    }
  }
  std::vector<std::string> gaps, stale;
  for (auto &[type, s] : ops) {
    for (auto &[k, vals] : s.values) {
      const AttrSpec *spec = s.def->findAttr(k);
      if (spec && spec->required)
        continue;                 // no default: any value is a variant
      if (s.counted[k] < s.calls) // first written after calls without it
        vals.insert(spec && !spec->dflt.isNone() ? "(default)" : "None");
      bool pinned = spec && !spec->dflt.isNone()
                        ? llvm::any_of(vals, [](const std::string &v) { return v != "(default)"; })
                        : vals.size() >= 2;
      auto al = allowed.find({type, k});
      if (!pinned && al == allowed.end())
        gaps.push_back(type + " " + k + " {" + llvm::join(vals, ", ") + "}");
      if (pinned && al != allowed.end())
        stale.push_back(type + " " + k);
    }
  }
  for (auto &[key, why] : allowed)
    if (!ops.count(key.first))
      stale.push_back(key.first + " " + key.second + " (no fixture runs the op)");
  CHECK_MESSAGE(gaps.empty(), gaps.size()
                                  << " attribute(s) only ever at their default, not "
                                  << "in default-only.txt:\n  " << llvm::join(gaps, "\n  "));
  CHECK_MESSAGE(stale.empty(),
                "default-only.txt lists pinned attributes:\n  " << llvm::join(stale, "\n  "));
  MESSAGE(ops.size() << " op types run in the fixtures; " << allowed.size()
                     << " attributes listed as default-only");
}

TEST_CASE("op fixtures: each runs and matches PyTorch, or is refused naming its op and line") {
  auto expectations = readExpectations();
  auto names = fixtureNames();
  REQUIRE(names.size() >= 100);
  std::set<std::string> present(names.begin(), names.end());
  for (auto &[name, e] : expectations)
    CHECK_MESSAGE(present.count(name), "expectations.txt names a missing case: " << name);

  size_t refused = 0;
  double worst = 0;
  std::string worstCase;
  for (const std::string &name : names) {
    INFO("case " << name);
    std::string dir = opsDir() + "/fixtures/" + name;
    auto it = expectations.find(name);
    const Expectation e = it != expectations.end() ? it->second : Expectation{};
    if (!e.unsupportedOp.empty() || e.dynamic) {
      if (e.dynamic)
        checkDynamic(dir);
      else
        checkRefused(dir, e);
      ++refused;
      continue;
    }
    double w = checkMatches(dir, e);
    if (w > worst)
      worst = w, worstCase = name;
  }
  std::string counts = std::to_string(names.size()) +
                       " op fixtures: " + std::to_string(names.size() - refused) + " run, " +
                       std::to_string(refused) + " refused as listed";
  MESSAGE(counts << "; worst |a-b| = " << worst << " (" << worstCase << ")");
  // docs/ops.md states the counts between its fixtures markers.
  std::string doc = std::string(KC_SOURCE_DIR) + "/docs/ops.md";
  auto buf = llvm::MemoryBuffer::getFile(doc);
  REQUIRE_MESSAGE(bool(buf), doc << ": cannot read");
  llvm::StringRef text = (*buf)->getBuffer();
  llvm::StringRef begin = "<!-- fixtures -->\n", end = "\n<!-- end fixtures -->";
  size_t b = text.find(begin), e = text.find(end);
  REQUIRE_MESSAGE((b != llvm::StringRef::npos && e != llvm::StringRef::npos && b < e),
                  doc << " has no <!-- fixtures --> section");
  CHECK_MESSAGE(text.slice(b + begin.size(), e) == counts,
                doc << " states '" << text.slice(b + begin.size(), e).str()
                    << "', the fixtures give '" << counts << "'");
}
