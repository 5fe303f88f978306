"""Look-back periods for `tally report --last`: 10d, 2w, 3m, 1y, or combined like 1m2w."""

import re

# A month is 30 days and a year 365 here: the report only needs a rough window.
UNIT_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}

_PART = re.compile(r"(\d+)([dwmy])")


def parse_duration(text):
    """Return the number of days in a period such as '2w' (14) or '1m2w' (44)."""
    spec = text.strip().lower().replace(" ", "")
    if not spec:
        raise ValueError("empty duration")
    days = 0
    pos = 0
    for match in _PART.finditer(spec):
        if match.start() != pos:
            break
        days += int(match.group(1)) * UNIT_DAYS[match.group(2)]
        pos = match.end()
    if pos != len(spec):
        raise ValueError(f"not a duration: {text!r} (try 10d, 2w, 3m or 1y)")
    return days
