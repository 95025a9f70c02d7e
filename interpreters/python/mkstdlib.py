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
# What a --package leaves out besides tests/: its extension modules' sources, compiled into the
# interpreter (C, and the Cython they are generated from).
PACKAGE_BUILD_INPUTS = (".c", ".h", ".pxd", ".pyx", ".pxi")


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
    ap.add_argument("--package", action="append", default=[],
                    help="a package directory to add under its own name: its .py files compiled, "
                         "its data files copied, its tests/ and C/Cython build inputs left out")
    ap.add_argument("--package-skip", action="append", default=[],
                    help="a subdirectory of a --package to leave out, by name")
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
    data = []
    for pkg in a.package:
        pkg = os.path.normpath(pkg)
        for root, dirs, names in os.walk(pkg):
            rel_root = os.path.relpath(root, os.path.dirname(pkg)) + "/"
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "tests", *a.package_skip))
            for n in sorted(names):
                if n.endswith(".py"):
                    files.append((os.path.join(root, n), rel_root + n))
                elif not n.endswith(PACKAGE_BUILD_INPUTS):
                    data.append((os.path.join(root, n), rel_root + n))
    for src, rel in files:
        compile_to(src, a.guest + "/" + rel, os.path.join(a.dir, rel[:-3] + ".pyc"))
    for src, rel in data:
        os.makedirs(os.path.dirname(os.path.join(a.dir, rel)), exist_ok=True)
        shutil.copyfile(src, os.path.join(a.dir, rel))
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
    print(f"mkstdlib.py: {len(files)} modules, {len(data)} data files, {len(buf.getvalue())} bytes zipped")


if __name__ == "__main__":
    main()
