"""Rank lists as the report, pyframes and the scenarios write them."""


def rank_text(ranks):
    """Sorted, runs compressed: [1, 2, 3] -> "1-3", [0, 2] -> "0,2", [0, 1, 2, 3, 4, 5, 6, 8] -> "0-6,8"."""
    ranks = sorted(set(ranks))
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else "%d-%d" % (ranks[i], ranks[j]))
        i = j + 1
    return ",".join(out)
