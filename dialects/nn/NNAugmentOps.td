//===- NNAugmentOps.td - data augmentation in training -----*- tablegen -*-===//
//
// Ops that perturb the input of a model while it trains and are the
// identity otherwise. Their randomness is counter-based, like dropout's:
// a hash of the step's seed, the op's key and a logical position.
//
//===----------------------------------------------------------------------===//

#ifndef NN_AUGMENT_OPS_TD
#define NN_AUGMENT_OPS_TD

include "dialects/nn/NNOpBase.td"

def NN_SpecAugmentOp : NN_SequenceMixingOp<"spec_augment", [
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "SpecAugment time and frequency masks while training";
  let description = [{
    `input` is features over one sequence dim: padded `[B, T, F]` or
    packed `[N, F]` (`N: packed(B, T)`), of a float type. Without `seed`
    (evaluation) the op is the identity. With `seed` (training mode, set by
    `nn-dropout-training` like a dropout's) each sequence b gets
    `freq_masks` frequency masks and `time_masks` time masks (Park et al.,
    2019, without time warping), and every element under a mask is set to
    0 (the mean of features normalized at import; `nn-data import
    --cmvn`). A mask covers whole bands: all frames of a range of features,
    or all features of a range of frames.

    Sequence b, of `L = len_T(b)` frames, draws its masks from 32-bit
    unsigned hashes, with `mix` MurmurHash3's finalizer as in `nn.dropout`:
    `h_b = mix(mix(mix(seed + 0x9e3779b9) ^ key) ^ b)`, and for mask m
    (the frequency masks first, m = 0 .. freq_masks - 1, then the time
    masks) `u = mix(h_b ^ 2m) >> 8` and `v = mix(h_b ^ (2m + 1)) >> 8`:

    * a frequency mask has width `w = u mod (freq_width + 1)` and covers
      features `[s, s + w)`, `s = v mod (F - w + 1)`;
    * a time mask has width `w = u mod (W + 1)` with
      `W = min(time_width, floor(time_ratio * L))` (the ratio bounds a
      mask of a short sequence; `floor` of the product in double) and
      covers frames `[s, s + w)` of the sequence, `s = v mod (L - w + 1)`.

    Widths may be 0 (no mask) and masks may overlap, as in the paper. A
    mask depends on the sequence's own length only, never on the padded
    length or the layout, so packed and padded runs mask the same
    elements, and padded frames are left as they are. The VJP is the same
    op on the gradient (the masked elements get none).

    ```mlir
    %a = nn.spec_augment %x freq_masks 2 freq_width 8 time_masks 2
        time_width 20 time_ratio 2.000000e-01 : !nn.tensor<[B, T, 40], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, Optional<NN_IntegerTensor>:$seed,
                       I64Attr:$freq_masks, I64Attr:$freq_width,
                       I64Attr:$time_masks, I64Attr:$time_width,
                       DefaultValuedAttr<F64Attr, "1.0">:$time_ratio,
                       DefaultValuedAttr<I64Attr, "0">:$key);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input (`seed` $seed^)? `freq_masks` $freq_masks `freq_width` $freq_width
    `time_masks` $time_masks `time_width` $time_width
    (`time_ratio` $time_ratio^)? (`key` $key^)? attr-dict `:`
    qualified(type($result)) (`,` qualified(type($seed))^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether some mask can cover an element: a mask count and its
    /// width both nonzero.
    bool masksAnything() {
      return (getFreqMasks() > 0 && getFreqWidth() > 0) ||
             (getTimeMasks() > 0 && getTimeWidth() > 0);
    }
  }];
  // Without masks, the identity in training and evaluation alike.
  let hasFolder = 1;
}

#endif // NN_AUGMENT_OPS_TD
