"""learn --task next-token's source, recomputed with NumPy from its transition table (issue 31).

Usage: markov_source.py DIR V SMOOTHING — DIR holds next.npy ([V*V, branches], the likely next
tokens of context (a, b) at row a*V + b) and weight.npy (their probabilities). Builds the whole
pair chain (a, b) -> (b, c), solves for its stationary distribution exactly (the left eigenvector
of eigenvalue 1, by a linear solve), and prints the entropy rate, H(X_{t+1} | X_t), H(X_t) and the
best predictor's accuracy as JSON, independently of the C++ power iteration."""
import json
import sys

import numpy as np


def main():
    folder, V, eps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    nxt = np.load(f"{folder}/next.npy").astype(np.int64)
    w = np.load(f"{folder}/weight.npy")
    P = np.full((V * V, V), eps / V)                              # P[a*V + b, c] = P(c | a, b)
    for ctx in range(V * V):
        for i in range(nxt.shape[1]):
            P[ctx, nxt[ctx, i]] += (1 - eps) * w[ctx, i]
    T = np.zeros((V * V, V * V))                                  # pair chain (a, b) -> (b, c)
    for a in range(V):
        for b in range(V):
            T[a * V + b, b * V: b * V + V] = P[a * V + b]
    A = T.T - np.eye(V * V)                                       # pi T = pi, sum pi = 1
    A[-1, :] = 1
    rhs = np.zeros(V * V)
    rhs[-1] = 1
    pi = np.linalg.solve(A, rhs)
    with np.errstate(divide="ignore", invalid="ignore"):
        H = -np.sum(np.where(P > 0, P * np.log(P), 0), axis=1)
    unigram = pi.reshape(V, V).sum(axis=0)                        # p(b)
    joint = (pi[:, None] * P).reshape(V, V, V).sum(axis=0)        # p(b, c)
    ent = lambda p: float(-np.sum(p[p > 0] * np.log(p[p > 0])))
    print(json.dumps({"entropy_rate": float(pi @ H), "order1_entropy": ent(joint.ravel()) - ent(unigram),
                      "unigram_entropy": ent(unigram), "best_accuracy": float(pi @ P.max(axis=1)),
                      "stationary": pi.tolist()}))


if __name__ == "__main__":
    main()
