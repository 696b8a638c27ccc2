"""The Conformer CTC model of examples/speech/conformer_ctc.mlir in
Python: convolutional subsampling (time / 2), two Conformer blocks
(Gulati et al., 2020: macaron feed-forward with half-step residuals,
self-attention with Transformer-XL relative positions, the convolution
module with a depthwise convolution within each utterance, final layer
norm) and 17 output classes; the graphs `acoustic`, `ctc` (the CTC loss,
and the label and word error rates of greedy decoding), `decode` and
`decode_beam` (the CTC prefix beam search).
`python conformer_ctc.py` prints the same program.

`--subsampling 4` or `6` prints the model with the time reductions
Conformer encoders usually have (Gulati et al. subsample by 4): a second
strided convolution after the first (stride 2, or 3 for 6), each followed
by SiLU, so the blocks run on frames of 40 or 60 ms; the dims say how
long every utterance is after each (`T4 = ceildiv(T2, 2)`). The CTC loss
then zeroes the utterances with fewer frames than their labels need
(`zero_infinity`): at one character per label, the short digits of the
spoken-word task leave a few of them (5 of the 800 training utterances
of test/examples/conformer-learns.mlir at 4, 84 at 6)."""

import argparse

import nn

B = nn.batch_dim("B")
T = nn.seq_dim("T", B)
T2 = T.ceildiv(2, name="T2")
U = nn.seq_dim("U", B)

# The strides of the subsampling convolutions for each time reduction.
SUBSAMPLING_STRIDES = {2: (2,), 4: (2, 2), 6: (2, 3)}


class FeedForward(nn.Module):
    def __init__(self, d, hidden):
        self.norm = nn.LayerNorm(d)
        self.w1 = nn.Linear(d, hidden)
        self.w2 = nn.Linear(hidden, d)

    def forward(self, x):
        h = self.w2(nn.silu(self.w1(self.norm(x))))
        return x + nn.dropout(h, 0.1) * 0.5


class SelfAttention(nn.Module):
    def __init__(self, d, heads, max_distance):
        self.heads, self.max_distance = heads, max_distance
        self.norm = nn.LayerNorm(d)
        self.q = nn.Linear(d, d)
        self.pos_bias = nn.Parameter(d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.pos = nn.Linear(d, d, bias=False)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        h = self.norm(x)
        # Content queries (bias u in q.b) and position queries (the same
        # weight, bias v).
        q = self.q(h)
        position_query = nn.linear(h, self.q.w, self.pos_bias)
        k, v = self.k(h), self.v(h)
        distances = nn.relative_positions(self.pos.w, self.max_distance)
        a = nn.attention(q, k, v, heads=self.heads,
                         relative=(position_query, distances))
        return x + nn.dropout(self.out(a), 0.1)


class DepthwiseConv(nn.Conv1d):
    """A depthwise convolution over time, then a layer norm (statistics of
    each frame, never of the batch)."""

    def __init__(self, d, kernel):
        super().__init__(d, d, kernel, groups=d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(super().forward(x))


class ConvModule(nn.Module):
    def __init__(self, d, kernel):
        self.norm = nn.LayerNorm(d)
        self.pw1 = nn.Linear(d, 2 * d)
        self.dw = DepthwiseConv(d, kernel)
        self.pw2 = nn.Linear(d, d)

    def forward(self, x):
        h = nn.silu(self.dw(nn.glu(self.pw1(self.norm(x)))))
        return x + nn.dropout(self.pw2(h), 0.1)


class ConformerBlock(nn.Module):
    def __init__(self, d, hidden, heads, kernel):
        self.ff1 = FeedForward(d, hidden)
        self.mhsa = SelfAttention(d, heads, max_distance=255)
        self.conv = ConvModule(d, kernel)
        self.ff2 = FeedForward(d, hidden)
        self.final_norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.final_norm(self.ff2(self.conv(self.mhsa(self.ff1(x)))))


class Conformer(nn.Module):
    def __init__(self, features=40, d=96, classes=17, subsampling=2):
        self.strides = SUBSAMPLING_STRIDES[subsampling]
        self.subsample = nn.Conv1d(features, d, 3, stride=self.strides[0])
        if len(self.strides) > 1:  # parameters subsample2.w, subsample2.b
            self.subsample2 = nn.Conv1d(d, d, 3, stride=self.strides[1])
        self.block1 = ConformerBlock(d, 2 * d, heads=4, kernel=15)
        self.block2 = ConformerBlock(d, 2 * d, heads=4, kernel=15)
        self.out = nn.Linear(d, classes)

    def forward(self, features):
        x = nn.silu(self.subsample(features))
        if len(self.strides) > 1:
            x = nn.silu(self.subsample2(x))
        return self.out(self.block2(self.block1(x)))


def build(subsampling=2):
    if subsampling not in SUBSAMPLING_STRIDES:
        raise ValueError(f"subsampling {subsampling!r}: one of "
                         f"{sorted(SUBSAMPLING_STRIDES)}")
    # The dim after the second convolution, named as a reader expects
    # (T4 = ceildiv(T2, 2)), before the convolution derives it unnamed. The
    # dim stays among T2's derived dims; a later build of the same factor
    # finds it.
    strides = SUBSAMPLING_STRIDES[subsampling]
    if len(strides) > 1:
        T2.ceildiv(strides[1], name=f"T{subsampling}")
    program = nn.Program(Conformer(subsampling=subsampling))
    acoustic = program.graph("acoustic", program.model,
                             features=nn.Input([B, T, 40]))

    def ctc(features, labels):
        masked = nn.spec_augment(features, freq_masks=2, freq_width=8,
                                 time_masks=2, time_width=10, time_ratio=0.2)
        logits = acoustic(masked)
        loss = nn.ctc_loss(logits, labels, blank=0,
                           zero_infinity=subsampling > 2)
        nn.mark_loss(loss, "ctc", normalize="per_sequence")
        hyp, _ = nn.ctc_greedy_decode(logits, blank=0)
        for name, separator in (("cer", None), ("wer", 1)):
            edits, length, _ = nn.edit_distance(hyp, labels, separator)
            nn.mark_loss(edits, name, normalize="custom", normalization=length,
                         as_error=True, eval_only=True)

    def decode(features):
        return nn.ctc_greedy_decode(acoustic(features), blank=0)

    def decode_beam(features):
        return nn.ctc_beam_search(acoustic(features), blank=0, beam=8,
                                  merge="sum")

    program.graph("ctc", ctc, features=nn.Input([B, T, 40]),
                  labels=nn.Input([B, U], "i32"))
    program.graph("decode", decode, features=nn.Input([B, T, 40]))
    program.graph("decode_beam", decode_beam, features=nn.Input([B, T, 40]))
    return program


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subsampling", type=int, default=2,
                        choices=sorted(SUBSAMPLING_STRIDES),
                        help="the encoder's time reduction (default 2)")
    print(build(parser.parse_args().subsampling), end="")
