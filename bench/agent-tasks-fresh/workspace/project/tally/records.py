"""Expenses on disk (one CSV row each) and the sums over them."""

import calendar
import csv
import os
from collections import namedtuple
from datetime import date
from decimal import Decimal

from tally.money import parse_amount

FIELDS = ("date", "amount", "category", "merchant", "note")

Expense = namedtuple("Expense", FIELDS)


def parse_row(row):
    """One csv.DictReader row -> Expense. Merchants and notes may hold commas (quoted)."""
    return Expense(
        date=date.fromisoformat(row["date"].strip()),
        amount=parse_amount(row["amount"]),
        category=row["category"].strip().lower(),
        merchant=(row.get("merchant") or "").strip(),
        note=(row.get("note") or "").strip(),
    )


def load_expenses(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [parse_row(row) for row in csv.DictReader(f)]


def append_expense(path, expense):
    """Append one row, writing the header first if the file is new or empty."""
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        if new:
            writer.writerow(FIELDS)
        writer.writerow([expense.date.isoformat(), f"{expense.amount:.2f}", expense.category,
                         expense.merchant, expense.note])


def month_bounds(year, month):
    """The first and the last day of a month, both inclusive."""
    first = date(year, month, 1)
    last_day = date(year, month, calendar.monthrange(year, month)[1])
    return first, last_day


def month_total(expenses, year, month, category=None):
    """Sum of the month's expenses, optionally of one category only."""
    first, last_day = month_bounds(year, month)
    total = Decimal("0.00")
    for e in expenses:
        if category is not None and e.category != category:
            continue
        if first <= e.date < last_day:
            total += e.amount
    return total


def totals_by_category(expenses, since=None):
    """{category: total} over the expenses on or after `since` (all of them if None)."""
    totals = {}
    for e in expenses:
        if since is not None and e.date < since:
            continue
        totals[e.category] = totals.get(e.category, Decimal("0.00")) + e.amount
    return dict(sorted(totals.items()))
