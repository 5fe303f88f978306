"""Settings. Everything here can be overridden on the command line."""

import os

# Currency used when an amount is printed and none is given with --currency.
DEFAULT_CURRENCY = "EUR"

# Where expenses are read from and appended to ($TALLY_FILE overrides it).
DATA_FILE = os.environ.get("TALLY_FILE", os.path.expanduser("~/data/expenses.csv"))

# Dates in the CSV and on the command line.
DATE_FORMAT = "%Y-%m-%d"

# The categories `tally add` accepts.
CATEGORIES = (
    "groceries",
    "eating out",
    "transport",
    "household",
    "health",
    "fun",
    "gifts",
)
