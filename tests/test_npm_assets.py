"""What the pages serve from the package managers (runnable_book/pipeline/npm_assets.py): made
from the book's node_modules, again only for what changed (by content) or was changed by hand,
and a clear error naming what is missing when the book's npm packages are not installed."""

from __future__ import annotations

import gzip

import pytest

from runnable_book.pipeline import npm_assets


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A book whose node_modules holds stand-ins of Pyodide's files; the bundler and the
    wheels' download stand in too (their own tests are esbuild's and pyodide_packages')."""
    node_modules = tmp_path / "node_modules"
    (node_modules / "pyodide").mkdir(parents=True)
    for name in npm_assets.PYODIDE_FILES:
        (node_modules / "pyodide" / name).write_bytes(f"{name}, version 1\n".encode() * 100)
    (node_modules / ".package-lock.json").write_text('{"packages": {}}\n')
    monkeypatch.setattr(npm_assets, "ROOT", tmp_path)
    monkeypatch.setattr(npm_assets, "NODE_MODULES", node_modules)
    monkeypatch.setattr(npm_assets, "STATIC", tmp_path / "_build" / "static")
    monkeypatch.setattr(npm_assets, "RECORD", tmp_path / "_build" / "digests" / "npm-assets.json")

    def packages(lock, out):
        (out / "served-packages.json").write_text("[]\n")

    def bundled(entry):
        return lambda partial: partial.write_text(f"bundle of {entry.name} with {(node_modules / '.package-lock.json').read_text()}")
    monkeypatch.setattr(npm_assets, "served_packages", packages)
    monkeypatch.setattr(npm_assets, "bundled", bundled)
    return tmp_path


def made(capsys) -> list[str]:
    return [line.split("making", 1)[1].strip() for line in capsys.readouterr().out.splitlines() if "making" in line]


def test_everything_once_then_nothing_while_nothing_changed(book, capsys):
    npm_assets.make_all()
    first = made(capsys)
    assert "_build/static/pyodide/pyodide.asm.wasm.gz" in first
    assert {f"_build/static/runner/{name}" for name in npm_assets.BUNDLES} <= set(first)
    served = book / "_build" / "static" / "pyodide"
    assert gzip.decompress((served / "pyodide.asm.wasm.gz").read_bytes()) == (served / "pyodide.asm.wasm").read_bytes()
    npm_assets.make_all()
    assert made(capsys) == []


def test_a_new_runtime_remakes_its_file_and_what_is_made_from_it_and_a_hand_edit_is_undone(book, capsys):
    npm_assets.make_all()
    capsys.readouterr()
    (book / "node_modules" / "pyodide" / "pyodide.asm.wasm").write_bytes(b"version 2\n")
    npm_assets.make_all()
    assert made(capsys) == ["_build/static/pyodide/pyodide.asm.wasm", "_build/static/pyodide/pyodide.asm.wasm.gz"]

    bundle = book / "_build" / "static" / "runner" / "editor.mjs"
    bundle.write_text("edited by hand")
    (book / "node_modules" / ".package-lock.json").write_text('{"packages": {"new": {}}}\n')  # npm installed another
    npm_assets.make_all()
    assert made(capsys) == [f"_build/static/runner/{name}" for name in npm_assets.BUNDLES]
    assert "new" in bundle.read_text()


def test_without_the_books_npm_packages_it_says_what_is_missing_and_writes_nothing(book, capsys):
    (book / "node_modules" / "pyodide" / "pyodide.mjs").unlink()
    assert npm_assets.main() == 1
    error = capsys.readouterr().err
    assert "node_modules/pyodide/pyodide.mjs is missing" in error and "npm ci" in error
    assert not (book / "_build" / "static" / "pyodide").exists()
