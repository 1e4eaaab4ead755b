//===- ScaledDotProductAttentionTest.cpp - F.scaled_dot_product_attention ===//
//
// The kernel against a direct computation in double of PyTorch's
// definition: softmax(q kᵀ · scale + mask) v, scale 1/sqrt(E) by default, a
// bool mask taking part where true, a float mask added, is_causal keeping
// j <= i, and with enable_gqa each key/value head serving heads/kv_heads
// query heads. Tolerance 1e-5 + 1e-5·|want|.
//
//===----------------------------------------------------------------------===//
#include "TextModel.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace kc;
using namespace kc::test;

namespace {

struct Case {
  std::vector<int64_t> q, k, v, mask; ///< mask empty: none
  bool boolMask = false, causal = false, gqa = false;
  double scale = 0; ///< 0: the default
};

std::string dims(const std::vector<int64_t> &d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return "[" + s + "]";
}

int64_t count(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
  return n;
}

std::vector<double> reference(const Case &c, const std::vector<float> &q,
                              const std::vector<float> &k, const std::vector<float> &v,
                              const std::vector<float> &m) {
  size_t r = c.q.size();
  int64_t L = c.q[r - 2], E = c.q[r - 1], S = c.k[r - 2], Ev = c.v[r - 1];
  int64_t B = count(c.q) / (L * E), heads = r >= 3 ? c.q[r - 3] : 1;
  int64_t kvHeads = r >= 3 ? c.k[r - 3] : 1, group = heads / kvHeads;
  double scale = c.scale ? c.scale : 1.0 / std::sqrt(double(E));
  // The mask's element at (lead index b, i, j), broadcast right-aligned.
  std::vector<int64_t> full(c.q.begin(), c.q.end() - 2);
  full.push_back(L), full.push_back(S);
  auto maskAt = [&](int64_t b, int64_t i, int64_t j) {
    std::vector<int64_t> idx(full.size());
    idx[full.size() - 1] = j, idx[full.size() - 2] = i;
    for (size_t a = full.size() - 2; a-- > 0; b /= full[a])
      idx[a] = b % full[a];
    int64_t at = 0;
    for (size_t a = 0; a < c.mask.size(); ++a) {
      size_t fa = full.size() - c.mask.size() + a;
      at = at * c.mask[a] + (c.mask[a] == 1 ? 0 : idx[fa]);
    }
    return m[at];
  };
  std::vector<double> out;
  for (int64_t b = 0; b < B; ++b) {
    int64_t kvb = (b / heads) * kvHeads + (b % heads) / group;
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(S);
      double mx = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e)
          dot += double(q[(b * L + i) * E + e]) * k[(kvb * S + j) * E + e];
        s[j] = dot * scale;
        if (!c.mask.empty())
          s[j] = c.boolMask ? (maskAt(b, i, j) != 0 ? s[j] : -INFINITY) : s[j] + maskAt(b, i, j);
        if (c.causal && j > i)
          s[j] = -INFINITY;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (double &x : s)
        sum += (x = std::exp(x - mx));
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j)
          acc += s[j] / sum * v[(kvb * S + j) * Ev + e];
        out.push_back(acc);
      }
    }
  }
  return out;
}

} // namespace

TEST_CASE("F.scaled_dot_product_attention against its definition") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  auto random = [&](int64_t n) {
    std::vector<float> x(n);
    for (float &e : x)
      e = uni(rng);
    return x;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4, 5}, {2, 3, 6, 5}, {2, 3, 6, 7}, {}},
      {{2, 3, 4, 5}, {2, 3, 6, 5}, {2, 3, 6, 7}, {}, false, true},
      {{2, 3, 4, 5}, {2, 3, 6, 5}, {2, 3, 6, 7}, {4, 6}, true},
      {{2, 3, 4, 5}, {2, 3, 6, 5}, {2, 3, 6, 7}, {2, 1, 4, 6}, false},
      {{1, 4, 3, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}, {}, false, false, true, 0.5},
      {{3, 4}, {5, 4}, {5, 2}, {5}, false, false, false, 2.0},
      // No keys: the output is zeros, as PyTorch's.
      {{2, 3, 5}, {2, 0, 5}, {2, 0, 4}, {}},
      // Rows long enough for the vector loops, on two threads' worth of work.
      {{4, 2, 33, 40}, {4, 2, 70, 40}, {4, 2, 70, 24}, {1, 2, 33, 70}, true}};
  for (const Case &c : cases) {
    std::string attrs = std::string("{is_causal=") + (c.causal ? "true" : "false") +
                        ", enable_gqa=" + (c.gqa ? "true" : "false");
    if (c.scale)
      attrs += ", scale=" + std::to_string(c.scale);
    attrs += "}";
    std::string params = "%q: f32" + dims(c.q) + ", %k: f32" + dims(c.k) + ", %v: f32" + dims(c.v);
    std::string args = "%q, %k, %v";
    if (!c.mask.empty()) {
      params += ", %m: " + std::string(c.boolMask ? "bool" : "f32") + dims(c.mask);
      args += ", %m";
    }
    std::string text = oneOp(params, "F.scaled_dot_product_attention(" + args + ") " + attrs);
    CAPTURE(text);
    auto q = random(count(c.q)), k = random(count(c.k)), v = random(count(c.v));
    std::vector<float> m = random(count(c.mask));
    std::vector<rt::Tensor> inputs{f32(c.q, q), f32(c.k, k), f32(c.v, v)};
    if (!c.mask.empty() && c.boolMask) {
      std::vector<uint8_t> bits(m.size());
      for (size_t i = 0; i < m.size(); ++i)
        bits[i] = m[i] > -0.5f; // about three in four take part
      for (float &x : m)
        x = x > -0.5f;
      inputs.push_back(tensorOf(DType::Bool, c.mask, bits));
    } else if (!c.mask.empty()) {
      inputs.push_back(f32(c.mask, m));
    }
    std::vector<double> want = reference(c, q, k, v, m);
    TextRun r = runText(text, inputs);
    REQUIRE_MESSAGE(r.error.empty(), r.error);
    std::vector<float> got = values(r.outputs[0]);
    REQUIRE(got.size() == want.size());
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      bad += !(std::fabs(got[i] - want[i]) <= 1e-5 + 1e-5 * std::fabs(want[i]));
    CHECK(bad == 0);
  }
}

TEST_CASE("F.scaled_dot_product_attention refuses what it cannot run, naming the op") {
  const std::string qkv = "%q: f32[2,4,8], %k: f32[2,6,8], %v: f32[2,6,3]";
  CHECK(typeError(oneOp(qkv, "F.scaled_dot_product_attention(%q, %k, %v) {dropout_p=0.1}"))
            .find("dropout_p=0.1 drops random weights") != std::string::npos);
  CHECK(typeError(oneOp(qkv + ", %m: bool[4,6]",
                        "F.scaled_dot_product_attention(%q, %k, %v, %m) {is_causal=true}"))
            .find("takes attn_mask or is_causal, not both") != std::string::npos);
  CHECK(typeError(oneOp(qkv + ", %m: bool[3,6]", "F.scaled_dot_product_attention(%q, %k, %v, %m)"))
            .find("does not broadcast to the scores") != std::string::npos);
  CHECK(typeError(oneOp("%q: f32[2,4,8], %k: f32[2,6,7], %v: f32[2,6,3]",
                        "F.scaled_dot_product_attention(%q, %k, %v)"))
            .find("F.scaled_dot_product_attention") != std::string::npos);
  CHECK(typeError(oneOp("%q: f32[1,3,4,8], %k: f32[1,2,6,8], %v: f32[1,2,6,8]",
                        "F.scaled_dot_product_attention(%q, %k, %v) {enable_gqa=true}"))
            .find("dim 1 of query, key and value disagrees") != std::string::npos);
}
