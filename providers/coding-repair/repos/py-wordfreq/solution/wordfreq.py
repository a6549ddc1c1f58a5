"""Word counts of a text."""

import re
from collections import Counter


def words(text):
    return re.findall(r"[a-z']+", text.lower())


def top_words(text, n):
    """The n most frequent words with their counts, most frequent first, ties alphabetical."""
    counts = Counter(words(text))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
