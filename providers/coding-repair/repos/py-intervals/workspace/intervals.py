"""Closed intervals (start, end) with start <= end."""


def merge(intervals):
    """The union of the intervals as a sorted list of disjoint intervals."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
