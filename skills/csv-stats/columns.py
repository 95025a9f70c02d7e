"""What csv-stats says of one column."""

import statistics
from collections import Counter


def number(cell):
    """The cell as a number, or None when it is not one ("" is a missing value, not a zero)."""
    try:
        return float(cell.replace(",", "")) if cell else None
    except ValueError:
        return None


def summarise(values, top):
    present = [v for v in values if v != ""]
    numbers = [n for n in (number(v) for v in present) if n is not None]
    if present and len(numbers) == len(present):
        out = {
            "type": "number",
            "count": len(numbers),
            "missing": len(values) - len(present),
            "mean": round(statistics.fmean(numbers), 6),
            "median": statistics.median(numbers),
            "min": min(numbers),
            "max": max(numbers),
        }
        if len(numbers) > 1:
            out["stdev"] = round(statistics.stdev(numbers), 6)
        return out
    counts = Counter(present)
    return {
        "type": "text",
        "count": len(present),
        "missing": len(values) - len(present),
        "distinct": len(counts),
        "top": [{"value": v, "count": c} for v, c in counts.most_common(top)],
    }
