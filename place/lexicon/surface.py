"""Surface forms of canonical values: one regex per value that finds it in free text.

The trajectory format stores every value in a canonical form (`time` ``HH:MM``, `date`
``YYYY-MM-DD``, `number` a decimal string, `money` ``<amount> <ISO currency>``, `enum` any
string) and says typed values are also recognised "in their usual written forms". This
module turns a canonical value plus its aliases into one case-insensitive regex source
that matches exactly those written forms and nothing that merely contains them: ``3``
never matches inside ``13``, ``3:00``, ``3.5``, ``2026-03-14`` or ``€300``; ``9:40`` never
matches ``19:40`` nor the canonical ``21:40``; ``9:40 pm`` never matches ``09:40``.

Only the regex *sources* are built here; `place.lexicon.readback` compiles them once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

# Boundaries shared by every form. A value must not be glued to a word character, and a
# numeric form must not be the tail or head of a longer number, time or date ("13", "3:00",
# "2026-03-14", "3.5"): a separator between two digits continues the number.
LEFT = r"(?<!\w)(?<!\d[.,:/-])"
RIGHT = r"(?!\w)(?![.,:/-]\d)"

_APOSTROPHE = re.compile("['’]")
_TIME_RE = re.compile(r"^(\d{1,2}):(\d{2})$")
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")
_MONEY_RE = re.compile(r"^(-?\d+(?:\.\d+)?) ([A-Z]{3})$")

# "a.m." / "am" / "a.m" (the optional final period belongs to the abbreviation only when
# the dotted spelling is used, so "9 am." leaves the sentence's full stop alone).
_AM = r"(?:a\.m\.?|am)"
_PM = r"(?:p\.m\.?|pm)"
_NOT_FOLLOWED_BY_AM = r"(?!\s?a\.?m\b)"
_NOT_FOLLOWED_BY_PM = r"(?!\s?p\.?m\b)"

_MONTHS: tuple[tuple[str, ...], ...] = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sept", "sep"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)

# Currency spellings. Prefix forms precede the amount ("€1,200", "US$ 40"), suffix forms
# follow it ("1200 euros"). Codes without an entry still match as "<code> <amount>" and
# "<amount> <code>".
_CURRENCY_PREFIX: dict[str, tuple[str, ...]] = {
    "EUR": ("€", "EUR"),
    "USD": ("US$", "$", "USD"),
    "GBP": ("£", "GBP"),
    "CHF": ("CHF", "Fr."),
    "JPY": ("¥", "JPY"),
}
_CURRENCY_SUFFIX: dict[str, tuple[str, ...]] = {
    "EUR": ("euros", "euro", "EUR", "€"),
    "USD": ("US dollars", "dollars", "dollar", "USD", "$"),
    "GBP": ("pounds sterling", "pounds", "pound", "GBP", "£"),
    "CHF": ("Swiss francs", "francs", "franc", "CHF"),
    "JPY": ("yen", "JPY", "¥"),
}


def is_canonical(value_type: str, value: str) -> bool:
    """Whether `value` is written in the canonical form of `value_type`."""
    if value_type == "time":
        m = _TIME_RE.match(value)
        return (
            m is not None and len(m.group(1)) == 2 and int(m.group(1)) < 24 and int(m.group(2)) < 60
        )
    if value_type == "date":
        m = _DATE_RE.match(value)
        return m is not None and 1 <= int(m.group(2)) <= 12 and 1 <= int(m.group(3)) <= 31
    if value_type == "number":
        return bool(_NUMBER_RE.match(value))
    if value_type == "money":
        return bool(_MONEY_RE.match(value))
    return value_type == "enum" and bool(value.strip())


def literal(text: str) -> str:
    """Regex for a literal phrase: any run of whitespace matches any whitespace, and straight
    and curly apostrophes are interchangeable (models and users type both)."""
    words = [re.escape(w) for w in text.split()]
    return _APOSTROPHE.sub("['’]", r"\s+".join(words))


def value_pattern(value_type: str, canonical: str, aliases: Iterable[str] = ()) -> str:
    """Regex source matching every written form of one canonical value (case-insensitive).

    Raises ValueError when `canonical` is not in the canonical form of `value_type`.
    """
    # Typed forms already cover the canonical spelling, with the guards a literal lacks
    # ("300" must not match inside "€300"); an enum's canonical string is its own form.
    forms = typed_forms(value_type, canonical)
    literals = (canonical, *aliases) if value_type == "enum" else tuple(aliases)
    forms += [literal(a) for a in literals if a.strip()]
    unique = list(dict.fromkeys(forms))
    # Longer alternatives first: at one position the regex engine takes the first that
    # matches, and the longest written form is the one the text means ("Hotel Lumen" over
    # "Lumen", "9:40 pm" over "9:40").
    unique.sort(key=len, reverse=True)
    return LEFT + "(?:" + "|".join(unique) + ")" + RIGHT + _type_guard(value_type)


def _type_guard(value_type: str) -> str:
    # A bare number right before a currency sign is an amount of money, not a count.
    return r"(?!\s?[€$£¥])" if value_type == "number" else ""


def typed_forms(value_type: str, canonical: str) -> list[str]:
    """The typed written forms of a canonical value (aliases excluded)."""
    if not is_canonical(value_type, canonical):
        raise ValueError(f"{canonical!r} is not a canonical {value_type} value")
    if value_type == "time":
        return time_forms(canonical)
    if value_type == "date":
        return date_forms(canonical)
    if value_type == "number":
        return [number_pattern(canonical, left_guard=True)]
    if value_type == "money":
        return money_forms(canonical)
    return []


def time_forms(canonical: str) -> list[str]:
    """``HH:MM`` as written: 24 h ("09:40", "9.40", "21:40"), 12 h ("9:40 am", "9:40pm",
    "9.40 p.m."), whole hours ("7 am", "7 o'clock"), "noon" and "midnight".

    A bare ``H:MM`` with H < 12 is read as the morning (that is how ``9:40`` is written
    for 09:40); it never matches when followed by the other half-day's suffix.
    """
    hour, minute = (int(p) for p in canonical.split(":"))
    mm = f"{minute:02d}"
    half = _AM if hour < 12 else _PM
    other = _NOT_FOLLOWED_BY_PM if hour < 12 else _NOT_FOLLOWED_BY_AM
    h24 = f"0?{hour}" if hour < 10 else str(hour)
    h12 = hour % 12 or 12
    forms = [
        f"{h24}[:.]{mm}{other}",
        f"0?{h12}[:.]{mm}\\s?{half}",
    ]
    if minute == 0:
        forms.append(f"0?{h12}\\s?{half}")
        if 1 <= hour <= 11:
            forms.append(f"{hour}\\s?o['’]\\s?clock{_NOT_FOLLOWED_BY_PM}")
        if hour == 12:
            forms += [r"(?:12\s+)?noon", "midday"]
        if hour == 0:
            forms.append(r"(?:12\s+)?midnight")
    return forms


def date_forms(canonical: str) -> list[str]:
    """``YYYY-MM-DD`` as written: "2026-03-14", "14 March", "14th of March", "March 14th",
    "Mar. 14", each optionally followed by its own year ("March 14, 2026"). A different
    explicit year right after the day and month rules the form out."""
    year, month, day = (int(p) for p in canonical.split("-"))
    month_re = "(?:" + "|".join(_month_spelling(name) for name in _MONTHS[month - 1]) + ")"
    day_re = f"0?{day}(?:st|nd|rd|th)?"
    year_re = f"(?:,?\\s+{year}(?!\\d)|(?!,?\\s+(?:1[89]|2\\d)\\d\\d(?!\\d)))"
    return [
        f"{year}-{month:02d}-{day:02d}",
        f"{day_re}(?:\\s+of)?\\s+{month_re}{year_re}",
        f"{month_re}\\s+(?:the\\s+)?{day_re}{year_re}",
    ]


def _month_spelling(name: str) -> str:
    # Abbreviations may carry a period ("Mar. 14"); full names may not.
    return f"{name}\\.?" if len(name) <= 4 and name != "may" else name


def number_pattern(canonical: str, *, left_guard: bool = False) -> str:
    """A decimal as written: "1200", "1,200", "1200.0", "2.50" for "2.5"."""
    sign = "-" if canonical.startswith("-") else ""
    amount = Decimal(canonical.lstrip("-"))
    integer, _, fraction = f"{amount:f}".partition(".")
    fraction = fraction.rstrip("0")
    integer_re = integer
    if len(integer) > 3:
        integer_re = f"(?:{integer}|{int(integer):,})"
    fraction_re = f"\\.{fraction}0*" if fraction else r"(?:\.0+)?"
    guard = r"(?<![€$£¥])" if left_guard else ""
    return f"{guard}{re.escape(sign)}{integer_re}{fraction_re}"


def money_forms(canonical: str) -> list[str]:
    """``<amount> <CUR>`` as written: "1200 EUR", "EUR 1200", "€1,200", "€ 1200",
    "1200€", "1,200 euros", "$40", "US$40", "40 dollars", "£5", "CHF 20", "¥500".

    A bare amount without any currency is not this value: it could be any currency.
    """
    amount, currency = canonical.split(" ")
    amount_re = number_pattern(amount)
    prefixes = _CURRENCY_PREFIX.get(currency, (currency,))
    suffixes = _CURRENCY_SUFFIX.get(currency, (currency,))
    forms = [f"{_symbol(p)}\\s?{amount_re}" for p in prefixes]
    forms += [f"{amount_re}\\s?{_symbol(s)}" for s in suffixes]
    return forms


def _symbol(symbol: str) -> str:
    # Alphabetic spellings must stand alone ("EUR" not inside "EURO-bond"); bare symbols
    # like "€" need no boundary.
    text = literal(symbol)
    if symbol[0].isalpha():
        text = r"(?<!\w)" + text
    if symbol[-1].isalpha():
        text += r"(?!\w)"
    return text
