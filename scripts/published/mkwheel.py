"""Writes a pure-Python wheel (py3-none-any) of one package directory, for wheels.sh.

    python3 mkwheel.py NAME VERSION PACKAGE_DIR OUT_DIR

The wheel holds the package as its directory has it (no __pycache__), and the METADATA, WHEEL
and RECORD files pip reads and checks; it declares no dependencies.
"""
import base64
import hashlib
import os
import sys
import zipfile


def main(name, version, pkgdir, out):
    dist = f"{name}-{version}.dist-info"
    path = os.path.join(out, f"{name}-{version}-py3-none-any.whl")
    base = os.path.dirname(pkgdir.rstrip("/"))
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for root, dirs, files in os.walk(pkgdir):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                full = os.path.join(root, f)
                rel = os.path.relpath(full, base)
                data = open(full, "rb").read()
                z.writestr(rel, data)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                records.append(f"{rel},sha256={digest},{len(data)}")
        z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: skillbox-mkwheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        records += [f"{dist}/METADATA,,", f"{dist}/WHEEL,,", f"{dist}/RECORD,,"]
        z.writestr(f"{dist}/RECORD", "\n".join(records) + "\n")
    print(path)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: mkwheel.py NAME VERSION PACKAGE_DIR OUT_DIR")
    main(*sys.argv[1:])
