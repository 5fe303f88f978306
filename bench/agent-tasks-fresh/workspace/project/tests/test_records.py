import os
import tempfile
import unittest
from datetime import date
from decimal import Decimal

from tally.records import (Expense, append_expense, load_expenses, month_bounds, month_total,
                           totals_by_category)


def e(day, amount, category="groceries"):
    return Expense(date.fromisoformat(day), Decimal(amount), category, "shop", "")


SAMPLE = [
    e("2027-09-30", "10.00"),
    e("2027-10-01", "1.00"),
    e("2027-10-15", "20.00"),
    e("2027-10-15", "5.50", "fun"),
    e("2027-10-31", "300.00"),
    e("2027-11-01", "4000.00"),
]


class MonthTest(unittest.TestCase):
    def test_month_bounds(self):
        self.assertEqual(month_bounds(2027, 10), (date(2027, 10, 1), date(2027, 10, 31)))
        self.assertEqual(month_bounds(2028, 2), (date(2028, 2, 1), date(2028, 2, 29)))

    def test_month_total_counts_first_and_last_day(self):
        self.assertEqual(month_total(SAMPLE, 2027, 10), Decimal("326.50"))

    def test_month_total_one_category(self):
        self.assertEqual(month_total(SAMPLE, 2027, 10, category="groceries"), Decimal("321.00"))
        self.assertEqual(month_total(SAMPLE, 2027, 10, category="fun"), Decimal("5.50"))

    def test_month_total_empty_month(self):
        self.assertEqual(month_total(SAMPLE, 2027, 12), Decimal("0.00"))


class TotalsTest(unittest.TestCase):
    def test_totals_by_category_since(self):
        totals = totals_by_category(SAMPLE, since=date(2027, 10, 15))
        self.assertEqual(totals, {"fun": Decimal("5.50"), "groceries": Decimal("4320.00")})


class FileTest(unittest.TestCase):
    def test_round_trip_with_commas(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "expenses.csv")
            append_expense(path, Expense(date(2027, 10, 2), Decimal("93.41"), "groceries",
                                         "Continente, Forum Algarve", "big shop, wine"))
            append_expense(path, e("2027-10-03", "4.20", "fun"))
            rows = load_expenses(path)
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[0].merchant, "Continente, Forum Algarve")
        self.assertEqual(rows[0].note, "big shop, wine")
        self.assertEqual(rows[1].amount, Decimal("4.20"))


if __name__ == "__main__":
    unittest.main()
