"""GOOD/BAD/MISSING comparison of printed records, order ignored (after MIT 6.1810's gradelib).

GOOD: lines expected and present; BAD: lines present that were not expected (or more copies than
expected); MISSING: lines expected that are absent (or fewer copies)."""
from collections import Counter


def multiset_diff(expected, actual, limit=8):
    """Return None when the multisets are equal, else a report listing the differences."""
    want, got = Counter(expected), Counter(actual)
    if want == got:
        return None
    missing = want - got
    bad = got - want
    good = sum((want & got).values())
    lines = ["GOOD    %d of %d expected records" % (good, sum(want.values()))]
    for tag, counter in (("BAD", bad), ("MISSING", missing)):
        items = sorted(counter.items())
        total = sum(counter.values())
        for text, copies in items[:limit]:
            lines.append("%-7s %s%s" % (tag, text, "  (x%d)" % copies if copies > 1 else ""))
        if len(items) > limit:
            lines.append("%-7s ... %d more %s records" % (tag, total - sum(c for _, c in items[:limit]), tag))
    return "\n".join(lines)
