"""Amounts: parsing what the user typed, and printing totals."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from tally.config import DEFAULT_CURRENCY

CENT = Decimal("0.01")

SYMBOLS = {"EUR": "€", "GBP": "£", "USD": "$"}


def parse_amount(text):
    """'12.5' -> Decimal('12.50'). Thousands separators are allowed: '1,204.10'."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def format_amount(amount, currency=None):
    """Decimal('1204.1') -> '€1,204.10'; codes without a symbol go after: '12.00 CHF'."""
    currency = (currency or DEFAULT_CURRENCY).upper()
    value = Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)
    sign = "-" if value < 0 else ""
    body = f"{abs(value):,.2f}"
    symbol = SYMBOLS.get(currency)
    if symbol:
        return f"{sign}{symbol}{body}"
    return f"{sign}{body} {currency}"
