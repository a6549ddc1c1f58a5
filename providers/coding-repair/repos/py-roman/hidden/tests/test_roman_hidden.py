import unittest

from roman import to_roman


class ToRoman(unittest.TestCase):
    def test_one(self):
        self.assertEqual(to_roman(1), "I")

    def test_three(self):
        self.assertEqual(to_roman(3), "III")

    def test_2023(self):
        self.assertEqual(to_roman(2023), "MMXXIII")

    def test_out_of_range(self):
        with self.assertRaises(ValueError):
            to_roman(0)
        with self.assertRaises(ValueError):
            to_roman(4000)

    def test_four(self):
        self.assertEqual(to_roman(4), "IV")

    def test_1994(self):
        self.assertEqual(to_roman(1994), "MCMXCIV")

    def test_49(self):
        self.assertEqual(to_roman(49), "XLIX")
