"""The `tally` command: report, month, add."""

import argparse
import sys
from datetime import date, timedelta

from tally import __version__
from tally.config import CATEGORIES, DATA_FILE
from tally.durations import parse_duration
from tally.money import format_amount, parse_amount
from tally.records import (Expense, append_expense, load_expenses, month_bounds, month_total,
                           totals_by_category)


def parse_month(text):
    """'2027-10' -> (2027, 10)."""
    try:
        year, month = (int(part) for part in text.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a month: {text!r} (use YYYY-MM)") from None
    if not 1 <= month <= 12:
        raise argparse.ArgumentTypeError(f"no month {month} in a year")
    return year, month


def cmd_report(args):
    """Totals by category, over everything or over the last period (--last 2w)."""
    expenses = load_expenses(args.file)
    since = None
    if args.last:
        since = date.today() - timedelta(days=parse_duration(args.last))
    totals = totals_by_category(expenses, since=since)
    if not totals:
        print("no expenses")
        return 0
    width = max(len(category) for category in totals)
    for category, amount in totals.items():
        print(f"{category:<{width}}  {format_amount(amount, args.currency):>12}")
    print(f"{'total':<{width}}  {format_amount(sum(totals.values()), args.currency):>12}")
    return 0


def cmd_month(args):
    """One month's total, optionally for one category."""
    year, month = args.month
    first, last_day = month_bounds(year, month)
    total = month_total(load_expenses(args.file), year, month, category=args.category)
    label = args.category or "everything"
    print(f"{first:%d %b} to {last_day:%d %b %Y}, {label}: {format_amount(total, args.currency)}")
    return 0


def cmd_add(args):
    """Append one expense to the CSV."""
    if args.category not in CATEGORIES:
        print(f"unknown category {args.category!r}; one of: {', '.join(CATEGORIES)}",
              file=sys.stderr)
        return 2
    expense = Expense(date=args.date, amount=parse_amount(args.amount), category=args.category,
                      merchant=args.merchant, note=args.note)
    append_expense(args.file, expense)
    print(f"added {expense.date} {expense.category} {expense.amount:.2f}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="tally", description=__doc__)
    parser.add_argument("--version", action="version", version=f"tally {__version__}")
    parser.add_argument("--file", default=DATA_FILE, help="the expenses CSV")
    parser.add_argument("--currency", default=None, help="currency code for printed amounts")
    sub = parser.add_subparsers(dest="command", required=True)

    report = sub.add_parser("report", help="totals by category")
    report.add_argument("--last", help="only the last period, e.g. 10d, 2w, 3m")
    report.set_defaults(func=cmd_report)

    month = sub.add_parser("month", help="one month's total")
    month.add_argument("month", type=parse_month, help="YYYY-MM")
    month.add_argument("--category")
    month.set_defaults(func=cmd_month)

    add = sub.add_parser("add", help="record an expense")
    add.add_argument("amount")
    add.add_argument("category")
    add.add_argument("merchant")
    add.add_argument("note", nargs="?", default="")
    add.add_argument("--date", type=date.fromisoformat, default=date.today())
    add.set_defaults(func=cmd_add)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
