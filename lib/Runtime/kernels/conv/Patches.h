//===- Patches.h - Gathering a convolution's input patches ------*- C++ -*-===//
//
// The GEMM algorithms never write a whole im2col matrix where they can
// help it: the strip kernel gathers a block of output positions at a time,
// the panel kernel a strip of 6; only im2col + OpenBLAS gathers rows of
// the output plane.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ConvGeometry.h"
#include "../PackedGemm.h"

namespace kc::rt {

/// Rewrites each of `rows` rows of W floats as its even columns followed
/// by its odd ones, so that a stride-2 walk along a row reads consecutive
/// floats: gathering a stride-2 layer's patches becomes row copies.
void splitColumns(const float *in, float *out, int64_t rows, int64_t W, bool parallel);

/// Gathers, for input channels [c0, c1) of one group's input, the patch
/// values of output positions [n0, n0 + cols) (row-major over OH×OW): row
/// (c·KH + kh)·KW + kw of `col`, `ld` floats apart, holds the input value
/// each position's kernel tap (kh, kw) reads, zero in the padding. With
/// `split`, a stride-2 layer's input rows are laid out as splitColumns
/// leaves them.
void gatherPatches(const float *in, float *col, int64_t ld, int64_t c0, int64_t c1,
                   const ConvGeometry &g, int64_t n0, int64_t cols, bool split = false);

/// Scratch gatherPatchStrip needs, in floats.
inline int64_t patchStripScratch(const ConvGeometry &g) {
  return g.KH * g.KW * kColumnStrip * int64_t(sizeof(int64_t) / sizeof(float));
}

/// Gathers the patches of output positions [n0, n0 + cols) (cols ≤ 6) of
/// one group's input (Cg channels) as a strip for gemmPackedFewColumns:
/// group (c·KH + kh)·KW + kw holds the positions' values of tap (kh, kw)
/// in channel c, zero in the padding and past `cols`. Each tap's offsets
/// in a channel plane are worked out once per strip, into `scratch`
/// (patchStripScratch(g) floats), and serve every channel: on 7x7 outputs
/// a row-wise gather handles runs of 7 floats, and its per-run work cost
/// more than the copying.
void gatherPatchStrip(const float *in, int64_t Cg, const ConvGeometry &g, int64_t n0, int64_t cols,
                      float *strip, float *scratch);

/// Gathers the patches of output rows [oh0, oh1) of one group's input into
/// `col`: [Cg*KH*KW] rows × [(oh1-oh0)*OW] columns.
void im2col(const float *in, float *col, int64_t Cg, const ConvGeometry &g, int64_t oh0,
            int64_t oh1, bool parallel);

} // namespace kc::rt
