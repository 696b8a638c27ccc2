"""The MWER fine-tuning graph of the staged recipe
(examples/recipe/mwer.mlir) in Python: the N-best list of a CTC prefix
search, each hypothesis rescored by the model's own CTC loss as one entry
of the flattened batch H, and the expected risk over each list; `ctc`
stays marked, and `ler` is the dev label error rate of greedy decoding.
`python mwer.py` prints the same program."""

import nn

B = nn.batch_dim("B")
T = nn.seq_dim("T", B)
U = nn.seq_dim("U", B)


class BlstmCtc(nn.Module):
    def __init__(self):
        self.lstm = nn.LSTM(16, 32, bidirectional=True)
        self.out = nn.Linear(64, 8)

    def forward(self, features, labels):
        logits = self.out(self.lstm(features))
        nn.mark_loss(nn.ctc_loss(logits, labels, blank=0), "ctc",
                     normalize="per_sequence")
        # The N-best list, one batch entry per hypothesis.
        nbest, _ = nn.ctc_beam_search(logits, blank=0, beam=4, nbest=True)
        hyps = nn.flatten_beam(nbest)
        flat = hyps.axes[0]
        # Each hypothesis rescored by the model (the gradient's path), and
        # its errors against the reference.
        nll = nn.ctc_loss(nn.repeat_beam(logits, flat), hyps, blank=0,
                          zero_infinity=True)
        errors, _, _ = nn.edit_distance(hyps, nn.repeat_beam(labels, flat))
        risk = nn.expected_risk(nn.unflatten_beam(nll), nn.unflatten_beam(errors))
        nn.mark_loss(risk, "mwer", normalize="per_sequence")
        hyp, _ = nn.ctc_greedy_decode(logits, blank=0)
        edits, length, _ = nn.edit_distance(hyp, labels)
        nn.mark_loss(edits, "ler", normalize="custom", normalization=length,
                     as_error=True, eval_only=True)


def build():
    program = nn.Program(BlstmCtc())
    program.graph("mwer", program.model, features=nn.Input([B, T, 16]),
                  labels=nn.Input([B, U], "i32"))
    return program


if __name__ == "__main__":
    print(build(), end="")
