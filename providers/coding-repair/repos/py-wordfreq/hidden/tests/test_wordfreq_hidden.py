import unittest

from wordfreq import top_words


class TopWords(unittest.TestCase):
    def test_counts_ignore_case(self):
        self.assertEqual(top_words("The cat the end", 1), [("the", 2)])

    def test_n_limits(self):
        self.assertEqual(len(top_words("a b c d a", 2)), 2)

    def test_apostrophes_kept(self):
        self.assertEqual(top_words("don't don't stop", 1), [("don't", 2)])

    def test_empty_text(self):
        self.assertEqual(top_words("", 3), [])

    def test_ties_alphabetical(self):
        self.assertEqual(top_words("b a", 2), [("a", 1), ("b", 1)])

    def test_ties_after_higher_counts(self):
        self.assertEqual(top_words("z y x x w w", 4), [("w", 2), ("x", 2), ("y", 1), ("z", 1)])
