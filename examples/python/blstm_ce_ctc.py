"""Example 1 in Python: the two-layer BLSTM acoustic model of
examples/blstm_ce_ctc.mlir (frame-wise CE on the output layer, auxiliary
CTC on the encoder). `python blstm_ce_ctc.py` prints the same program."""

import nn

B = nn.batch_dim("B")
T = nn.seq_dim("T", B)
U = nn.seq_dim("U", B)


class BlstmAM(nn.Module):
    def __init__(self):
        self.lstm1 = nn.LSTM(80, 256, bidirectional=True)
        self.lstm2 = nn.LSTM(512, 256, bidirectional=True)
        self.out = nn.Linear(512, 1000)
        self.ctc = nn.Linear(512, 501)

    def forward(self, features, frame_labels, labels):
        h = self.lstm2(nn.dropout(self.lstm1(features), 0.1))
        logits = self.out(h)
        ce = nn.cross_entropy(logits, frame_labels, label_smoothing=0.1)
        nn.mark_loss(ce, "ce", normalize="per_frame")
        ctc = nn.ctc_loss(self.ctc(h), labels, blank=500)
        nn.mark_loss(ctc, "ctc", normalize="per_sequence", scale=0.5)
        return logits


def build():
    program = nn.Program(BlstmAM())
    program.graph("blstm_am", program.model, features=nn.Input([B, T, 80]),
                  frame_labels=nn.Input([B, T], "i32"),
                  labels=nn.Input([B, U], "i32"))
    return program


if __name__ == "__main__":
    print(build(), end="")
