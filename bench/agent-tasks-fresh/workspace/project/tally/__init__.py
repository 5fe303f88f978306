"""tally: add up a CSV of expenses from the terminal."""

__version__ = "0.3.1"
