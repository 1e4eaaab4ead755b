//===- kc/Pass/Pass.h - The pass interface ----------------------*- C++ -*-===//
///
/// \file
/// A pass transforms a Module. It has a name (used in pipelines:
/// `-p "fold-constants,cse"`), a one-line description, typed options
/// (`-p "simplify-expr{max-iterations=4}"`) and statistics counters. Passes
/// never print; the PassManager does the instrumentation.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "kc/IR/Module.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kc {

class Pass;

/// One option of a pass; typed subclasses are created with `Option<T>`.
class PassOptionBase {
public:
  PassOptionBase(Pass *owner, std::string name, std::string description);
  virtual ~PassOptionBase() = default;
  const std::string &name() const { return name_; }
  const std::string &description() const { return description_; }
  /// Parses and sets the value from pipeline text.
  virtual llvm::Error parse(llvm::StringRef value) = 0;
  virtual std::string valueText() const = 0;
  virtual llvm::StringRef typeName() const = 0;

private:
  std::string name_, description_;
};

/// A typed pass option (bool, int64_t, uint64_t, double or std::string), declared as a
/// member: `Option<int64_t> maxIterations{this, "max-iterations", "...", 8};`
template <typename T> class Option final : public PassOptionBase {
public:
  Option(Pass *owner, std::string name, std::string description, T dflt)
      : PassOptionBase(owner, std::move(name), std::move(description)), value_(std::move(dflt)) {}
  const T &operator*() const { return value_; }
  operator const T &() const { return value_; }
  Option &operator=(T v) {
    value_ = std::move(v);
    return *this;
  }
  llvm::Error parse(llvm::StringRef text) override;
  std::string valueText() const override;
  llvm::StringRef typeName() const override;

private:
  T value_;
};

/// A counter a pass increments; printed by `--pass-statistics`.
class Statistic {
public:
  Statistic(Pass *owner, std::string name, std::string description);
  Statistic &operator++() {
    ++value_;
    return *this;
  }
  Statistic &operator+=(uint64_t n) {
    value_ += n;
    return *this;
  }
  uint64_t value() const { return value_; }
  const std::string &name() const { return name_; }
  const std::string &description() const { return description_; }

private:
  std::string name_, description_;
  uint64_t value_ = 0;
};

class Pass {
public:
  virtual ~Pass() = default;
  Pass(const Pass &) = delete;
  Pass &operator=(const Pass &) = delete;

  /// The name used in pipelines, e.g. `fold-constants`.
  virtual llvm::StringRef name() const = 0;
  virtual llvm::StringRef description() const = 0;
  /// Transforms `m` in place (replacing its functions); errors are reported,
  /// never printed.
  virtual llvm::Error run(Module &m) = 0;

  llvm::ArrayRef<PassOptionBase *> options() const { return options_; }
  llvm::ArrayRef<Statistic *> statistics() const { return statistics_; }
  /// Sets option `key` from text; an unknown key or a bad value is an error.
  llvm::Error setOption(llvm::StringRef key, llvm::StringRef value);
  /// `name{opt=value,...}` with every option's current value.
  std::string pipelineText() const;

protected:
  Pass() = default;

private:
  friend class PassOptionBase;
  friend class Statistic;
  std::vector<PassOptionBase *> options_;
  std::vector<Statistic *> statistics_;
};

/// A pass over the expression functions (the primitive functions that hold
/// a `pnnx.Expression`'s AST): the subclass rewrites one body at a time in
/// runOnFunction; the base visits every primitive function, installs the
/// ones whose body changed and points main's calls at them. A pass that
/// also rewrites main overrides run() and calls ExpressionPass::run first.
class ExpressionPass : public Pass {
public:
  llvm::Error run(Module &m) override;

protected:
  /// `f`'s new body, or `f->body()` itself to leave it as it is.
  virtual llvm::Expected<Expr> runOnFunction(const FunctionNode &f) = 0;
};

using PassFactory = std::unique_ptr<Pass> (*)();

/// The global registry of passes, filled at static-initialization time by
/// KC_REGISTER_PASS in each pass's own file (and by loaded plugins).
class PassRegistry {
public:
  struct Entry {
    std::string name;
    std::string description;
    PassFactory factory;
  };
  static PassRegistry &global();
  void add(PassFactory factory);
  const Entry *lookup(llvm::StringRef name) const;
  /// Every pass, sorted by name.
  std::vector<const Entry *> all() const;

private:
  std::vector<std::unique_ptr<Entry>> entries_;
};

namespace detail {
template <typename P> std::unique_ptr<Pass> makePass() { return std::make_unique<P>(); }
struct PassRegistrar {
  explicit PassRegistrar(PassFactory f) { PassRegistry::global().add(f); }
};
} // namespace detail

/// Registers a pass class from its own file (or a plugin): one line.
#define KC_REGISTER_PASS(CLASS)                                                                    \
  static ::kc::detail::PassRegistrar kcPassRegistrar_##CLASS [[maybe_unused]]{                     \
      &::kc::detail::makePass<CLASS>}

/// Loads a shared library whose static registrars add passes to the registry.
llvm::Error loadPassPlugin(llvm::StringRef path);

} // namespace kc
