"""Lays out the guest's standard library as .pyc files, as a directory (for Wizer) and a zip (for
the runner, which serves it read-only through archive/zip).

Each module is compiled with --invalidation-mode unchecked-hash semantics (the guest has no source
to compare against) and placed where its .py would be, so CPython's sourceless loader finds it;
its code objects name the guest path (for tracebacks). The zip is deterministic: sorted entries,
fixed times, fixed modes.
"""

import argparse
import io
import os
import py_compile
import shutil
import sys
import zipfile

FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def excluded(rel, rules):
    return any(rel == r or rel.startswith(r + "/") for r in rules)


def compile_to(src, guest_name, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    py_compile.compile(src, cfile=dst, dfile=guest_name, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--exclude", required=True)
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--guest", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--zip", required=True)
    a = ap.parse_args()
    if sys.version_info[:2] != (3, 11):
        sys.exit("mkstdlib.py: run it with Python 3.11 (the guest's .pyc format)")
    rules = [l.strip() for l in open(a.exclude) if l.strip() and not l.startswith("#")]
    shutil.rmtree(a.dir, ignore_errors=True)
    files = []
    for root, dirs, names in os.walk(a.lib):
        rel_root = os.path.relpath(root, a.lib)
        rel_root = "" if rel_root == "." else rel_root + "/"
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not excluded(rel_root + d, rules))
        for n in sorted(names):
            rel = rel_root + n
            if n.endswith(".py") and not excluded(rel, rules):
                files.append((os.path.join(root, n), rel))
    for extra in a.extra:
        files.append((extra, os.path.basename(extra)))
    for src, rel in files:
        compile_to(src, a.guest + "/" + rel, os.path.join(a.dir, rel[:-3] + ".pyc"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for root, dirs, names in sorted(os.walk(a.dir)):
            dirs.sort()
            for n in sorted(names):
                path = os.path.join(root, n)
                info = zipfile.ZipInfo(os.path.relpath(path, a.dir), FIXED_TIME)
                info.external_attr = 0o444 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as f:
                    z.writestr(info, f.read(), compresslevel=9)
    with open(a.zip, "wb") as f:
        f.write(buf.getvalue())
    print(f"mkstdlib.py: {len(files)} modules, {len(buf.getvalue())} bytes zipped")


if __name__ == "__main__":
    main()
