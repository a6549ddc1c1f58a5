import unittest

from intervals import merge


class Merge(unittest.TestCase):
    def test_overlapping(self):
        self.assertEqual(merge([(1, 3), (2, 5)]), [(1, 5)])
