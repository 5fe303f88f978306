import unittest
from decimal import Decimal

from tally.money import format_amount, parse_amount


class MoneyTest(unittest.TestCase):
    def test_parse_rounds_to_cents(self):
        self.assertEqual(parse_amount("12.5"), Decimal("12.50"))
        self.assertEqual(parse_amount("1,204.105"), Decimal("1204.11"))

    def test_parse_rejects_words(self):
        with self.assertRaises(ValueError):
            parse_amount("twelve")

    def test_format_with_symbol(self):
        self.assertEqual(format_amount(Decimal("1204.1"), "EUR"), "€1,204.10")
        self.assertEqual(format_amount(Decimal("3"), "gbp"), "£3.00")

    def test_format_negative_and_code_only(self):
        self.assertEqual(format_amount(Decimal("-12.99"), "EUR"), "-€12.99")
        self.assertEqual(format_amount(Decimal("12"), "CHF"), "12.00 CHF")


if __name__ == "__main__":
    unittest.main()
