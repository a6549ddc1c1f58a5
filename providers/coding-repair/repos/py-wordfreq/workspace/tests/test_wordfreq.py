import unittest

from wordfreq import top_words


class TopWords(unittest.TestCase):
    def test_counts_ignore_case(self):
        self.assertEqual(top_words("The cat the end", 1), [("the", 2)])

    def test_ties_alphabetical(self):
        self.assertEqual(top_words("b a", 2), [("a", 1), ("b", 1)])
