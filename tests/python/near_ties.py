"""Near-ties for the oracles that compare a tool's selection (evicted entries, top-n blocks) exactly.

The tool scores in its own dtype and order of operations, NumPy in float64: two candidates whose
scores differ by less than that rounding can swap places between the two. NearTies accepts the
tool's different choice only when every swapped pair is a near-tie: NumPy's preferred score minus
the tool's is in (0, rel * max(1, scale)]. An exact float64 tie is not a near-tie: there the stated
tie rule (the older entry, the lower block) must hold. The oracle then replays the tool's choice,
so later steps are compared on the same cache. Accepted flips are printed as notes."""


class NearTies:
    def __init__(self, rel, label):
        self.rel, self.label = rel, label
        self.notes, self.errors = [], []

    def accept(self, gaps, scale, what):
        """gaps: NumPy's preferred score minus the tool's, per swapped pair; scale: the scores' size."""
        limit = self.rel * max(1.0, float(scale))
        if gaps and all(0.0 < g <= limit for g in gaps):
            self.notes.append(f"note: {self.label}: {what}: a near-tie (gap {max(gaps):.3g} <= {limit:.3g}), "
                              "the tool's choice accepted and followed")
            return True
        self.errors.append(f"{self.label}: {what}: not a near-tie (gaps {[float(g) for g in gaps]}, "
                           f"limit {limit:.3g}; an exact tie must follow the tie rule)")
        return False


def swapped_gaps(scores, numpy_set, tool_set):
    """For top-k sets: NumPy's kept minus the tool's kept score for every pair the two sets swap."""
    mine, theirs = set(numpy_set) - set(tool_set), set(tool_set) - set(numpy_set)
    if len(mine) != len(theirs):
        return []
    return [scores[m] - scores[t] for m in mine for t in theirs]
