"""The Conformer transducer of examples/speech/conformer_transducer.mlir in
Python: the encoder of conformer_ctc.py projected to a 64-dim joint space,
a prediction network (an embedding and an LSTM over the start symbol and
the labels) and a joint network, each a graph written once: the training
graph `rnnt` calls them on the packed (t, u) grid, and RNN-T beam search
(in `rnnt` on dev, and in `decode`) steps the same graphs.
`python conformer_transducer.py` prints the same program."""

import nn
from conformer_ctc import ConformerBlock

B = nn.batch_dim("B")
T = nn.seq_dim("T", B)
T2 = T.ceildiv(2, name="T2")
U = nn.seq_dim("U", B)


class Encoder(nn.Module):
    def __init__(self, d):
        self.proj = nn.Linear(96, d)


class ConformerTransducer(nn.Module):
    def __init__(self, features=40, d=96, joint=64, classes=17):
        self.subsample = nn.Conv1d(features, d, 3, stride=2)
        self.block1 = ConformerBlock(d, 2 * d, heads=4, kernel=15)
        self.block2 = ConformerBlock(d, 2 * d, heads=4, kernel=15)
        self.enc = Encoder(joint)
        self.embed = nn.Parameter(classes, joint)
        self.pred = nn.LSTM(joint, joint)
        self.joint = nn.Linear(joint, classes)

    def encoder(self, features):
        x = nn.silu(self.subsample(features))
        return self.enc.proj(self.block2(self.block1(x)))

    def predictor(self, labels):
        return self.pred(nn.embedding(labels, self.embed))

    def joiner(self, joint):
        return self.joint(nn.tanh(joint))


def build():
    model = ConformerTransducer()
    program = nn.Program(model)
    encoder = program.graph("encoder", model.encoder, features=nn.Input([B, T, 40]))
    S = nn.batch_dim("S")
    predictor = program.graph("predictor", model.predictor,
                              labels=nn.Input([S, nn.seq_dim("U", S)], "i32"))
    R = nn.batch_dim("R")
    joiner = program.graph("joiner", model.joiner, joint=nn.Input([R, 64]))

    def search(enc):
        return nn.transducer_beam_search(enc, predictor, joiner, blank=0, start=0,
                                         beam=4, max_symbols=3)

    def rnnt(features, labels):
        masked = nn.spec_augment(features, freq_masks=2, freq_width=8,
                                 time_masks=2, time_width=10, time_ratio=0.2)
        enc = encoder(masked)
        pred = predictor(nn.prepend_start(labels, start=0))
        logits = joiner(nn.transducer_join(enc, pred))
        loss = nn.transducer_loss(logits, labels, blank=0)
        nn.mark_loss(loss, "rnnt", normalize="per_sequence")
        hyp, _ = search(enc)
        for name, separator in (("cer", None), ("wer", 1)):
            edits, length, _ = nn.edit_distance(hyp, labels, separator)
            nn.mark_loss(edits, name, normalize="custom", normalization=length,
                         as_error=True, eval_only=True)

    program.graph("rnnt", rnnt, features=nn.Input([B, T, 40]),
                  labels=nn.Input([B, U], "i32"))
    program.graph("decode", lambda features: search(encoder(features)),
                  features=nn.Input([B, T, 40]))
    return program


if __name__ == "__main__":
    print(build(), end="")
