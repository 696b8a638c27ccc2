"""Example 2 in Python: the convolutional encoder of
examples/conv_encoder_decoupled_loss.mlir (time / 6), and its losses in a
separate criterion graph that calls it (the decoupled style)."""

import nn

B = nn.batch_dim("B")
T = nn.seq_dim("T", B)
T6 = T.ceildiv(2, name="T2").ceildiv(3, name="T6")


class ConvEncoder(nn.Module):
    def __init__(self):
        self.conv1 = nn.Conv1d(80, 256, 3, stride=2)
        self.conv2 = nn.Conv1d(256, 256, 3)
        self.norm = nn.LayerNorm(256)
        self.out = nn.Linear(256, 128)

    def forward(self, features):
        h = nn.relu(self.conv1(features))
        h = nn.pool(self.conv2(h), "max", window=3, stride=3)
        return self.out(self.norm(h))


Bc = nn.batch_dim("Bc")
Tc = nn.seq_dim("Tc", Bc)
Tc6 = Tc.ceildiv(2, name="Tc2").ceildiv(3, name="Tc6")
Uc = nn.seq_dim("Uc", Bc)


def build():
    program = nn.Program(ConvEncoder())
    encoder = program.graph("conv_encoder", program.model,
                            features=nn.Input([B, T, 80]))

    def criterion(feat, targets, labels, label_counts):
        logits = encoder(feat)
        ce = nn.cross_entropy(logits, targets)
        nn.mark_loss(ce, "ce", normalize="per_frame")
        ctc = nn.ctc_loss(logits, labels, blank=0, zero_infinity=True)
        nn.mark_loss(ctc, "ctc", normalize="custom", normalization=label_counts)

    program.graph("criterion", criterion, feat=nn.Input([Bc, Tc, 80]),
                  targets=nn.Input([Bc, Tc6], "i32"),
                  labels=nn.Input([Bc, Uc], "i32"),
                  label_counts=nn.Input([Bc]))
    return program


if __name__ == "__main__":
    print(build(), end="")
