"""Summarises a CSV table: numbers per numeric column, common values per text column."""

import csv
import io

from columns import summarise


def execute(args, ctx):
    if ("csv" in args) == ("file" in args):
        return {"success": False, "error": "give the table as csv (its text) or as file (a path), one of them"}
    text = args["csv"] if "csv" in args else ctx.read_file(args["file"])
    if not text.strip():
        return {"success": False, "error": "the table is empty"}
    delimiter = args.get("delimiter")
    if delimiter is None:
        try:
            delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = next(reader)
    columns = [[] for _ in header]
    rows = 0
    for row in reader:
        if not row:
            continue
        rows += 1
        for i, cell in enumerate(row[: len(header)]):
            columns[i].append(cell.strip())
    ctx.log(f"{rows} rows, {len(header)} columns, delimiter {delimiter!r}")
    return {
        "rows": rows,
        "delimiter": delimiter,
        "columns": {name or f"column {i + 1}": summarise(values, args["top"]) for i, (name, values) in enumerate(zip(header, columns))},
    }
