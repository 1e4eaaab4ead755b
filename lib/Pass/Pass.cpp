//===- Pass.cpp - Passes, options, statistics and the registry ------------===//
#include "kc/Pass/Pass.h"
#include "kc/IR/Attr.h"
#include "kc/Support/Quote.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <dlfcn.h>

namespace kc {

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

PassOptionBase::PassOptionBase(Pass *owner, std::string name, std::string description)
    : name_(std::move(name)), description_(std::move(description)) {
  owner->options_.push_back(this);
}

Statistic::Statistic(Pass *owner, std::string name, std::string description)
    : name_(std::move(name)), description_(std::move(description)) {
  owner->statistics_.push_back(this);
}

template <> llvm::Error Option<bool>::parse(llvm::StringRef text) {
  if (text == "true" || text == "1")
    value_ = true;
  else if (text == "false" || text == "0")
    value_ = false;
  else
    return error("option '" + name() + "' expects true or false, got " + quoteInput(text));
  return llvm::Error::success();
}
template <> llvm::Error Option<int64_t>::parse(llvm::StringRef text) {
  int64_t v;
  if (text.getAsInteger(10, v))
    return error("option '" + name() + "' expects an integer, got " + quoteInput(text));
  value_ = v;
  return llvm::Error::success();
}
template <> llvm::Error Option<uint64_t>::parse(llvm::StringRef text) {
  // getAsInteger on an unsigned type refuses a sign: -1 is never "no limit".
  uint64_t v;
  if (text.getAsInteger(10, v))
    return error("option '" + name() + "' expects a non-negative integer, got " +
                 quoteInput(text));
  value_ = v;
  return llvm::Error::success();
}
template <> llvm::Error Option<double>::parse(llvm::StringRef text) {
  double v;
  if (text.getAsDouble(v))
    return error("option '" + name() + "' expects a number, got " + quoteInput(text));
  value_ = v;
  return llvm::Error::success();
}
template <> llvm::Error Option<std::string>::parse(llvm::StringRef text) {
  value_ = text.str();
  return llvm::Error::success();
}

template <> std::string Option<bool>::valueText() const { return value_ ? "true" : "false"; }
template <> std::string Option<int64_t>::valueText() const { return std::to_string(value_); }
template <> std::string Option<uint64_t>::valueText() const { return std::to_string(value_); }
template <> std::string Option<double>::valueText() const { return formatDouble(value_); }
template <> std::string Option<std::string>::valueText() const { return value_; }
template <> llvm::StringRef Option<bool>::typeName() const { return "bool"; }
template <> llvm::StringRef Option<int64_t>::typeName() const { return "int"; }
template <> llvm::StringRef Option<uint64_t>::typeName() const { return "uint"; }
template <> llvm::StringRef Option<double>::typeName() const { return "float"; }
template <> llvm::StringRef Option<std::string>::typeName() const { return "string"; }

llvm::Error Pass::setOption(llvm::StringRef key, llvm::StringRef value) {
  for (PassOptionBase *o : options_)
    if (o->name() == key)
      return o->parse(value);
  std::string known;
  for (PassOptionBase *o : options_)
    known += (known.empty() ? "" : ", ") + o->name();
  return error("pass '" + name() + "' has no option " + quoteInput(key) +
               (known.empty() ? std::string(" (it takes no options)")
                              : " (options: " + known + ")"));
}

std::string Pass::pipelineText() const {
  std::string s = name().str();
  if (options_.empty())
    return s;
  s += '{';
  for (size_t i = 0; i < options_.size(); ++i)
    s += (i ? "," : "") + options_[i]->name() + "=" + options_[i]->valueText();
  return s + '}';
}

PassRegistry &PassRegistry::global() {
  static PassRegistry registry;
  return registry;
}

void PassRegistry::add(PassFactory factory) {
  std::unique_ptr<Pass> probe = factory();
  auto e = std::make_unique<Entry>();
  e->name = probe->name().str();
  e->description = probe->description().str();
  e->factory = factory;
  // A later registration of the same name (a plugin) replaces the earlier one.
  for (auto &old : entries_)
    if (old->name == e->name) {
      old = std::move(e);
      return;
    }
  entries_.push_back(std::move(e));
}

const PassRegistry::Entry *PassRegistry::lookup(llvm::StringRef name) const {
  for (auto &e : entries_)
    if (e->name == name)
      return e.get();
  return nullptr;
}

std::vector<const PassRegistry::Entry *> PassRegistry::all() const {
  std::vector<const Entry *> r;
  for (auto &e : entries_)
    r.push_back(e.get());
  std::sort(r.begin(), r.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return r;
}

llvm::Error loadPassPlugin(llvm::StringRef path) {
  // RTLD_GLOBAL so that the plugin's registrars bind to libkc's registries.
  void *handle = dlopen(path.str().c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    // dlerror() names the file first; the message is located at it instead.
    llvm::StringRef reason = dlerror();
    reason.consume_front((path + ": ").str());
    return error(path + ": error: cannot load pass plugin: " + reason);
  }
  return llvm::Error::success();
}

} // namespace kc
