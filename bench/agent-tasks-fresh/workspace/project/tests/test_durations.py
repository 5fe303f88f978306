import unittest

from tally.durations import parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_single_units(self):
        self.assertEqual(parse_duration("10d"), 10)
        self.assertEqual(parse_duration("2w"), 14)
        self.assertEqual(parse_duration("3m"), 90)
        self.assertEqual(parse_duration("1y"), 365)

    def test_combined_and_spaced(self):
        self.assertEqual(parse_duration("1m2w"), 44)
        self.assertEqual(parse_duration(" 1W 3D "), 10)

    def test_rejects_garbage(self):
        for text in ("", "2", "w2", "2x", "1m-2w"):
            with self.assertRaises(ValueError, msg=text):
                parse_duration(text)


if __name__ == "__main__":
    unittest.main()
