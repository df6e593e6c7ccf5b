#!/usr/bin/python3
"""The tutorial's own PyTorch walkthrough at the default size (3 tokens, d = 4), as a baseline
for tests/bench/step_speed.sh. It prints each intermediate, as `attn-explain step` does."""
import math

import torch
import torch.nn.functional as F

X = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
torch.manual_seed(0)
W_Q, W_K, W_V = (torch.randn(4, 4) for _ in range(3))
Q, K, V = X @ W_Q, X @ W_K, X @ W_V
scores = Q @ K.transpose(-2, -1)
scaled = scores / math.sqrt(Q.size(-1))
weights = F.softmax(scaled, dim=-1)
output = weights @ V
for name, t in (("X", X), ("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("Q", Q), ("K", K), ("V", V),
                ("scores", scores), ("scaled_scores", scaled), ("weights", weights), ("output", output)):
    print(name, tuple(t.shape))
    print(t)
