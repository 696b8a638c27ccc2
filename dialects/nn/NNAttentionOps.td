//===- NNAttentionOps.td - attention over sequence dims ----*- tablegen -*-===//
//
// Multi-head scaled dot-product attention within each sequence's own
// frames, its gradient, which shares its checks, and rotary position
// embeddings for its queries and keys.
//
//===----------------------------------------------------------------------===//

#ifndef NN_ATTENTION_OPS_TD
#define NN_ATTENTION_OPS_TD

include "dialects/nn/NNOpBase.td"

/// The attributes nn.attention and nn.attention_grad share: the heads, the
/// scale, the mask and the dropout of the weights.
defvar NN_AttentionAttributes = (ins NN_PositiveI64Attr:$heads,
    OptionalAttr<NN_PositiveF64Attr>:$scale, UnitAttr:$causal,
    OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$left_context,
    OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$right_context,
    OptionalAttr<NN_PositiveI64Attr>:$chunk_size,
    OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$left_chunks,
    OptionalAttr<NN_UnitIntervalF64Attr>:$dropout,
    DefaultValuedAttr<I64Attr, "0">:$dropout_key);

/// The operands after the value: relative positions, then the dropout
/// seed.
defvar NN_AttentionOptionalOperandFormat = [{
  (`relative` $relative^)? (`seed` $seed^)?
}];

defvar NN_AttentionAttributeFormat = [{
  `heads` $heads (`scale` $scale^)? (`causal` $causal^)?
  (`left_context` $left_context^)? (`right_context` $right_context^)?
  (`chunk_size` $chunk_size^)? (`left_chunks` $left_chunks^)?
  (`dropout` $dropout^)? (`dropout_key` $dropout_key^)?
}];

/// The accessors nn.attention and nn.attention_grad share.
defvar NN_AttentionAccessors = [{
    /// The scale of the scores: the `scale` attribute, else 1 / sqrt(Dk).
    double getScaleOrDefault();
    /// The queries with the position bias (`relative`'s first operand),
    /// or null without relative positions.
    ::mlir::Value getPositionQuery() {
      return getRelative().empty() ? nullptr : getRelative()[0];
    }
    /// The distances' embeddings `[2c + 1, H * Dk]` (`relative`'s
    /// second operand), or null.
    ::mlir::Value getPositions() {
      return getRelative().size() < 2 ? nullptr : getRelative()[1];
    }
}];

/// What nn.attention and nn.attention_with_stats add: whether the op is
/// the forward of an attention gradient.
defvar NN_AttentionForwardAccessors = !strconcat(NN_AttentionAccessors, [{
    /// Whether this op computes the attention whose gradient `grad` is:
    /// the same query, key, value, relative positions and seed, and the
    /// same heads, scale (the default one given or not), mask and dropout.
    bool isForwardOf(AttentionGradOp grad);
}]);

def NN_AttentionOp : NN_SequenceMixingOp<"attention", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<NN_SequenceMixingOpInterface,
                              ["hasPackedForm", "getPaddedFrameWork"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "multi-head scaled dot-product attention within each sequence";
  let description = [{
    `query` `[B, Tq, H * Dk]`, `key` `[B, Tk, H * Dk]` and `value`
    `[B, Tk, H * Dv]`, the features of head `h` at `[h * D, (h + 1) * D)`;
    the result is `[B, Tq, H * Dv]`. Query frame `i` of sequence `b`
    attends, in each head, to the key frames `j < len_k(b)` that the mask
    lets it see (all of them without one):

        out[b, i, h] = sum_j softmax_j(scale * q[b, i, h] . k[b, j, h]) v[b, j, h]

    with `scale` `1 / sqrt(Dk)` unless given. Nothing of another sequence
    and no padded frame is ever read: a sequence's result depends on its
    own frames alone, whatever its batch-mates are. A query whose sequence
    has no key it may see gets 0, and padded query frames get 0.

    Self-attention is `key` and `value` over the query's sequence dim
    (`Tk` = `Tq`); cross-attention (an attention decoder's queries over
    label frames, keys over encoder frames) uses another sequence dim of
    the same batch. Packed frames (`[N, F]`, N declared `packed(B, T)`)
    work as padded ones do, all three operands packed or none.

    The masks apply to self-attention only, with `i` and `j` frames of the
    same sequence; a key is visible when every given condition holds:
    `causal`: `j <= i`; `left_context L`: `j >= i - L`;
    `right_context R`: `j <= i + R`; `chunk_size C`: `j < (i / C + 1) C`
    (frames see their own chunk and the chunks before it, as streaming
    Conformers train); `left_chunks K` with it: `j >= (i / C - K) C`.

    **Relative positions** (`relative %r, %p`, self-attention only) add
    a term by each pair's distance within the sequence, as the Conformer
    (Gulati et al. 2020) takes it from Transformer-XL (Dai et al. 2019):

        score[i, j] = scale * (q[i] . k[j] + r[i] . p[c + clamp(i - j, -c, c)])

    per head, with `r` (`[B, T, H * Dk]`, the query's type) the queries
    with the position bias (Transformer-XL's `v`; the queries carry the
    content bias `u`) and `p` (`[2c + 1, H * Dk]`, no position axes) the
    projected embeddings of the distances `-c ... c`, row `c + d` for
    `d = i - j` (`nn.relative_positions` makes them from sinusoids).
    Distances beyond `c` take the end rows (clipped, as Shaw et al. 2018
    do); with `c` at least the longest sequence less one there is no
    clipping. Distances are frame indices within each sequence, so the
    term, like the rest, never depends on the batch or padding (the
    "relative shift" over a padded `[T, 2T - 1]` matrix that other
    implementations do is a gather by `i - j` within each block here).

    **Dropout of the weights** (`dropout rate`): without `seed`
    (evaluation) nothing is dropped. With `seed` (training mode, set by
    `nn-dropout-training` with the op's `dropout_key`) each attention
    weight (softmax) of query frame `i` and key frame `j` of head `h` of
    sequence `b` is kept and scaled by `1 / (1 - rate)`
    or zeroed, after the softmax, by nn.dropout's counter hash with the
    coordinates `(b, h, i, j)` (frame indices within the sequence): `h0 =
    mix(mix(seed + 0x9e3779b9) ^ dropout_key)`, then `mix(. ^ c)` for `c`
    in `b, h, i, j`; kept iff `(h >> 8) * 2^-24 >= rate`. Packed and
    padded runs drop the same weights, and the gradient redraws them.

    The lowering never holds a `[Tq, Tk]` score matrix: it walks blocks of
    queries and keys with an online softmax (FlashAttention's algorithm),
    and the gradient recomputes the scores block by block.

    ```mlir
    %y = nn.attention %q, %k, %v heads 4 causal : !nn.tensor<[B, T, 256], f32>,
        !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 256], f32>
    %z = nn.attention %q, %k, %v relative %r, %p heads 4
        : !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 256], f32>,
          !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 256], f32>,
          !nn.tensor<[255, 256], f32>
    ```
  }];
  let arguments = !con((ins NN_FloatTensor:$query, NN_FloatTensor:$key,
                            NN_FloatTensor:$value,
                            Variadic<NN_FloatTensor>:$relative,
                            Optional<NN_IntegerTensor>:$seed),
                       NN_AttentionAttributes);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = !strconcat([{ $query `,` $key `,` $value }],
      NN_AttentionOptionalOperandFormat, NN_AttentionAttributeFormat,
      [{ attr-dict `:` qualified(type(operands)) }]);
  let hasVerifier = 1;
  let extraClassDeclaration = NN_AttentionForwardAccessors;
}

def NN_AttentionWithStatsOp : NN_Op<"attention_with_stats", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "nn.attention that also keeps what its gradient reads";
  let description = [{
    Computes `nn.attention`'s result from the same operands and attributes,
    and `stats`, each query's log normalizer per head: the query's
    position axes and `H` features (`[B, Tq, H]`, packed `[N, H]`), the
    element type of the result. For query frame `i` and head `h`,
    `stats = log sum_j exp(s[i, j])` over the keys `j` it sees, `s` the
    scaled scores the softmax takes (its weights are `exp(s - stats)`,
    undropped);
    `+inf` for a query that sees no key. Padded query frames hold 0.
    Only `nn-save-attention-stats` creates it, after `nn-autodiff`, and
    hands `result` and `stats` to the `nn.attention_grad` of the same
    operands (docs/autodiff.md, "Attention"). With its stats unused (the
    gradient gone) it canonicalizes back to `nn.attention`.

    ```mlir
    %y, %lse = nn.attention_with_stats %q, %k, %v heads 4
        : !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 256], f32>,
          !nn.tensor<[B, T, 256], f32>
        -> !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 4], f32>
    ```
  }];
  let arguments = !con((ins NN_FloatTensor:$query, NN_FloatTensor:$key,
                            NN_FloatTensor:$value,
                            Variadic<NN_FloatTensor>:$relative,
                            Optional<NN_IntegerTensor>:$seed),
                       NN_AttentionAttributes);
  let results = (outs NN_FloatTensor:$result, NN_FloatTensor:$stats);
  let assemblyFormat = !strconcat([{ $query `,` $key `,` $value }],
      NN_AttentionOptionalOperandFormat, NN_AttentionAttributeFormat,
      [{ attr-dict `:` qualified(type(operands)) `->` qualified(type($result))
         `,` qualified(type($stats)) }]);
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
  let extraClassDeclaration = !strconcat(NN_AttentionForwardAccessors, [{
    /// The stats of an attention with query type `query` and `heads`:
    /// the query's position axes and one value per head.
    static NNTensorType getStatsType(NNTensorType query, int64_t heads);
  }]);
}

def NN_AttentionGradOp : NN_Op<"attention_grad", [Pure,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the gradients of nn.attention";
  let description = [{
    `grad` is the gradient of an attention's result; the other operands
    and attributes are the attention's. With `p[i, j]` the attention
    weights of one head and `dp[i, j] = grad[i] . v[j]`:
    `dv[j] = sum_i p[i, j] grad[i]`,
    `ds[i, j] = p[i, j] (dp[i, j] - sum_j' p[i, j'] dp[i, j'])`,
    `dq[i] = scale sum_j ds[i, j] k[j]`, `dk[j] = scale sum_i ds[i, j] q[i]`.
    With relative positions `r`, `p` there are two more results, the
    gradients of `r` and `p`: `dr[i] = scale sum_j ds[i, j] p[c + d]` and
    `dpos[c + d] = scale sum_(i, j) ds[i, j] r[i]` over the pairs of every
    sequence at (clipped) distance `d`.
    With dropout and a seed the weights are the dropped ones, redrawn
    from the same hash.
    Padded frames of `grad` are never read, and every gradient is 0 on
    padded frames. The lowering recomputes the weights block by block
    (FlashAttention's backward) rather than keeping them from the forward.

    `saved %out, %stats` (both or neither) are the two results of one
    `nn.attention_with_stats` of the same operands and attributes: the
    gradient then reads each query's log normalizer and output instead
    of walking the keys a first time to recompute them (FlashAttention-2's
    backward). `nn-save-attention-stats` adds them.

    ```mlir
    %dq, %dk, %dv = nn.attention_grad %dy, %q, %k, %v heads 4 causal
        : !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 256], f32>,
          !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 256], f32>
    ```
  }];
  let arguments = !con((ins NN_FloatTensor:$grad, NN_FloatTensor:$query,
                            NN_FloatTensor:$key, NN_FloatTensor:$value,
                            Variadic<NN_FloatTensor>:$relative,
                            Optional<NN_IntegerTensor>:$seed,
                            Optional<NN_FloatTensor>:$saved_output,
                            Optional<NN_FloatTensor>:$saved_stats),
                       NN_AttentionAttributes);
  let results = (outs NN_FloatTensor:$query_grad, NN_FloatTensor:$key_grad,
                      NN_FloatTensor:$value_grad,
                      Variadic<NN_FloatTensor>:$relative_grads);
  let assemblyFormat = !strconcat(
      [{ $grad `,` $query `,` $key `,` $value }],
      NN_AttentionOptionalOperandFormat,
      [{ (`saved` $saved_output^ `,` $saved_stats)? }],
      NN_AttentionAttributeFormat,
      [{ attr-dict `:` qualified(type(operands)) }]);
  let hasVerifier = 1;
  let extraClassDeclaration = NN_AttentionAccessors;
}

def NN_RelativePositionsOp : NN_Op<"relative_positions", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "projected sinusoidal embeddings of relative distances";
  let description = [{
    The table `p` that `nn.attention`'s `relative` takes: row `c + d`
    (`d = -c ... c`, the result `[2c + 1, O]`) is `weight` `[O, E]`
    applied to the sinusoidal embedding of the distance `d` (Vaswani et
    al. 2017, as Transformer-XL embeds distances):

        e[d, 2m] = sin(d * 10000^(-2m / E)),  e[d, 2m + 1] = cos(d * 10000^(-2m / E))
        p[c + d] = weight e[d]

    `E` is even; `weight` is the Conformer's `linear_pos` (no bias).

    ```mlir
    %p = nn.relative_positions %w : !nn.tensor<[256, 256], f32>
        -> !nn.tensor<[255, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$weight);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $weight attr-dict `:` qualified(type($weight)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def NN_RelativePositionsGradOp : NN_Op<"relative_positions_grad", [Pure,
    AllTypesMatch<["weight", "result"]>]> {
  let summary = "the weight gradient of nn.relative_positions";
  let description = [{
    `dweight[o, f] = sum_d grad[c + d, o] e[d, f]`, with `e` the
    sinusoidal embeddings of `nn.relative_positions`. `weight` gives the
    shape only.

    ```mlir
    %dw = nn.relative_positions_grad %dp, %w : !nn.tensor<[255, 256], f32>,
        !nn.tensor<[256, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$weight);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $weight attr-dict `:` qualified(type($grad)) `,`
    qualified(type($weight))
  }];
  let hasVerifier = 1;
}

def NN_RotaryOp : NN_SequenceMixingOp<"rotary", [
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<NN_SequenceMixingOpInterface,
                              ["hasPackedForm", "getPaddedFrameWork"]>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "rotary position embedding, by each frame's place in its sequence";
  let description = [{
    `input` `[B, T, H * D]` (or packed `[N, H * D]`), `D` even: in each
    head, the feature pairs `(2i, 2i + 1)` of frame `t` are rotated by the
    angle `t * base^(-2i / D)` (RoFormer, Su et al. 2021, with the pairs
    interleaved as in the paper):

        y[2i]     = x[2i] cos(a) - x[2i + 1] sin(a)
        y[2i + 1] = x[2i] sin(a) + x[2i + 1] cos(a)

    `t` is the frame's index within its own sequence, so the queries and
    keys of self-attention see each other's relative distance whatever
    the batch and padding are. `inverse` rotates by `-a` (the gradient).
    Padded frames give 0.

    ```mlir
    %qr = nn.rotary %q heads 4 : !nn.tensor<[B, T, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_PositiveI64Attr:$heads,
                       DefaultValuedAttr<NN_PositiveF64Attr, "10000.0">:$base,
                       UnitAttr:$inverse);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `heads` $heads (`base` $base^)? (`inverse` $inverse^)? attr-dict
    `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

#endif // NN_ATTENTION_OPS_TD
