import unittest

from intervals import merge


class Merge(unittest.TestCase):
    def test_empty(self):
        self.assertEqual(merge([]), [])

    def test_disjoint(self):
        self.assertEqual(merge([(1, 2), (4, 5)]), [(1, 2), (4, 5)])

    def test_overlapping(self):
        self.assertEqual(merge([(1, 3), (2, 5)]), [(1, 5)])

    def test_unsorted_input(self):
        self.assertEqual(merge([(6, 8), (1, 3), (2, 4)]), [(1, 4), (6, 8)])

    def test_contained(self):
        self.assertEqual(merge([(1, 10), (2, 3)]), [(1, 10)])

    def test_touching(self):
        self.assertEqual(merge([(1, 2), (2, 3)]), [(1, 3)])

    def test_chain_of_touching(self):
        self.assertEqual(merge([(5, 6), (1, 3), (3, 5), (8, 9)]), [(1, 6), (8, 9)])
