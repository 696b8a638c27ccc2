"""Example 3 in Python: the LSTM of examples/shared_tail_two_losses.mlir
with a shared hidden layer and two heads (classification CE, next-frame
regression MSE at a quarter weight)."""

import nn

B = nn.batch_dim("B")
T = nn.seq_dim("T", B)


class TwoHeads(nn.Module):
    def __init__(self):
        self.lstm = nn.LSTM(40, 64)
        self.hidden = nn.Linear(64, 128)
        self.cls = nn.Linear(128, 50, bias=False)
        self.reg = nn.Linear(128, 40, bias=False)

    def forward(self, x, classes, next_frames):
        a = nn.tanh(self.hidden(self.lstm(x)))
        log_probs = nn.log_softmax(self.cls(a))
        ce = nn.cross_entropy(log_probs, classes, input="log_probs")
        nn.mark_loss(ce, "ce", normalize="per_frame")
        mse = nn.mse(self.reg(a), next_frames)
        nn.mark_loss(mse, "mse", normalize="per_frame", scale=0.25)


def build():
    program = nn.Program(TwoHeads())
    program.graph("two_heads", program.model, x=nn.Input([B, T, 40]),
                  classes=nn.Input([B, T], "i32"),
                  next_frames=nn.Input([B, T, 40]))
    return program


if __name__ == "__main__":
    print(build(), end="")
