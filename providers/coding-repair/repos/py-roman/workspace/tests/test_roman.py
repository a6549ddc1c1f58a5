import unittest

from roman import to_roman


class ToRoman(unittest.TestCase):
    def test_three(self):
        self.assertEqual(to_roman(3), "III")

    def test_four(self):
        self.assertEqual(to_roman(4), "IV")
