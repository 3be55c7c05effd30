"""runnable_book/pipeline/pyodide_packages.py: Pyodide's wheels served only as its lock publishes them.

Unit tests on a small made-up lock and source archive; then, when `make assets` has run, the
real step again on a test copy of the source with one wheel's bytes planted: it stops,
naming the file, and writes nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from runnable_book.pipeline import pyodide_packages
from runnable_book.repository import ROOT

METADATA = "Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\nLicense: {licence}\nClassifier: License :: OSI Approved :: MIT License\n"


def wheel(name: str, licence: str = "MIT") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}/__init__.py", f"NAME = {name!r}\n")
        archive.writestr(f"{name}-1.0.dist-info/METADATA", METADATA.format(name=name, licence=licence))
    return buffer.getvalue()


def entry(name: str, data: bytes, depends=()) -> dict:
    return {"name": name, "version": "1.0", "file_name": f"{name}-1.0-py3-none-any.whl",
            "sha256": hashlib.sha256(data).hexdigest(), "depends": list(depends)}


@pytest.fixture
def release(tmp_path):
    """A lock of four packages (top -> mid -> leaf; other unrelated), a source archive holding
    all four under some folder, as the registry package does."""
    wheels = {name: wheel(name) for name in ("top", "mid", "leaf", "other")}
    packages = {"top": entry("top", wheels["top"], ["mid"]), "mid": entry("mid", wheels["mid"], ["leaf"]),
                "leaf": entry("leaf", wheels["leaf"]), "other": entry("other", wheels["other"])}
    lock = tmp_path / "pyodide-lock.json"
    lock.write_text(json.dumps({"info": {"version": "0.99.0"}, "packages": packages}))
    source = tmp_path / "carrier-1.0-py3-none-any.whl"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("carrier/__init__.py", "")
        for name, data in wheels.items():
            archive.writestr(f"carrier/assets/pyodide/{packages[name]['file_name']}", data)
    return lock, source, wheels


def run(lock, source, out, *names):
    return pyodide_packages.main(["--lock", str(lock), "--source", str(source), "--out", str(out), *names])


def test_serves_the_dependency_closure_verified_with_licences(release, tmp_path):
    lock, source, wheels = release
    out = tmp_path / "out"
    assert run(lock, source, out, "top") == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{n}-1.0-py3-none-any.whl" for n in ("top", "mid", "leaf")] + [pyodide_packages.MANIFEST])
    assert (out / "mid-1.0-py3-none-any.whl").read_bytes() == wheels["mid"]
    manifest = json.loads((out / pyodide_packages.MANIFEST).read_text())
    assert manifest["pyodide"] == "0.99.0"
    assert {p["name"]: p["licence"] for p in manifest["packages"]} == {
        "leaf": "MIT; MIT License", "mid": "MIT; MIT License", "top": "MIT; MIT License"}


def replant(source: Path, member_suffix: str, data: bytes, copy: Path) -> Path:
    """A copy of the source archive with one member's bytes replaced (stored, not recompressed:
    the real source is 77 MB)."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(copy, "w", zipfile.ZIP_STORED) as planted:
        for item in original.infolist():
            data_here = data if item.filename.endswith(member_suffix) else original.read(item)
            planted.writestr(item.filename, data_here)
    return copy


def test_a_mismatch_stops_the_step_naming_the_file_and_writes_nothing(release, tmp_path, capsys):
    lock, source, wheels = release
    planted = replant(source, "leaf-1.0-py3-none-any.whl", wheel("leaf", licence="tampered"),
                      tmp_path / "planted.whl")
    out = tmp_path / "out"
    assert run(lock, planted, out, "top") == 1
    error = capsys.readouterr().err
    assert "leaf-1.0-py3-none-any.whl" in error and "sha256" in error and "0.99.0" in error, error
    assert not out.exists()


def test_a_package_missing_from_the_lock_or_the_source_is_named(release, tmp_path, capsys):
    lock, source, _ = release
    assert run(lock, source, tmp_path / "out", "nosuch") == 1
    assert "nosuch: not in pyodide-lock.json" in capsys.readouterr().err
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(tmp_path / "thin.whl", "w") as thin:
        for item in original.infolist():
            if not item.filename.endswith("mid-1.0-py3-none-any.whl"):
                thin.writestr(item, original.read(item))
    assert run(lock, tmp_path / "thin.whl", tmp_path / "out", "top") == 1
    assert "mid-1.0-py3-none-any.whl: not in thin.whl" in capsys.readouterr().err


# The real step, on what `make assets` downloaded and served.
SERVED = ROOT / "_build" / "static" / "pyodide"
LOCK = ROOT / "node_modules" / "pyodide" / "pyodide-lock.json"
CACHE = ROOT / "_build" / "cache" / "pyodide-packages"


@pytest.fixture
def real_source():
    sources = sorted(CACHE.glob("*.whl"))
    if not (sources and LOCK.is_file() and (SERVED / pyodide_packages.MANIFEST).is_file()):
        pytest.skip("make assets has not run: no Pyodide lock, source or served packages")
    return sources[-1]


def test_the_served_packages_are_exactly_matplotlibs_closure_in_the_lock(real_source):
    lock = json.loads(LOCK.read_text())
    manifest = json.loads((SERVED / pyodide_packages.MANIFEST).read_text())
    wanted = pyodide_packages.closure(lock, ["matplotlib"])
    assert manifest["pyodide"] == lock["info"]["version"]
    assert [(p["name"], p["sha256"]) for p in manifest["packages"]] == [(w.name, w.sha256) for w in wanted]
    for w in wanted:
        assert hashlib.sha256((SERVED / w.file_name).read_bytes()).hexdigest() == w.sha256, w.file_name


def test_a_planted_wheel_in_a_copy_of_the_real_source_stops_the_step(real_source, tmp_path, capsys):
    planted_name = "pillow-10.2.0-cp312-cp312-pyodide_2024_0_wasm32.whl"
    planted = replant(real_source, planted_name, wheel("PIL"), tmp_path / real_source.name)
    out = tmp_path / "served"
    assert run(LOCK, planted, out, "matplotlib") == 1
    error = capsys.readouterr().err
    assert planted_name in error and "sha256" in error, error
    assert not out.exists()
