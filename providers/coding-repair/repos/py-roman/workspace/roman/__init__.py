"""Roman numerals for the integers 1 to 3999."""

NUMERALS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


def to_roman(n):
    if not 0 < n < 4000:
        raise ValueError("a Roman numeral is between 1 and 3999")
    out = []
    for value, letters in NUMERALS:
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)
