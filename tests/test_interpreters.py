"""The supported Pythons: one list, and what holds it (runnable_book/interpreters/).

pyproject.toml's classifiers name them; the README, the CI matrix (pythons.yml), requires-python
and Binder's Python agree with it; the one lock (requirements.txt) pins one version of every
package for each; `make env` takes a supported interpreter and refuses any other in one line,
and makes .venv anew when PYTHON= names another. That the lock installs on each interpreter
found here is `make test`'s stage pythons-lock (pip, minutes), and the book built on each is
`make test-pythons`: not these quick tests.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from runnable_book.interpreters import supported
from runnable_book.interpreters.lock_check import normalized, pins_where
from runnable_book.repository import ROOT

FIND_PYTHON = ROOT / "runnable_book" / "interpreters" / "find_python.sh"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def marker_environment(version: str) -> dict[str, str]:
    """Linux on x86-64 under CPython ``version`` (e.g. "3.11.2"), as pip evaluates markers."""
    return {"python_version": version.rsplit(".", 1)[0], "python_full_version": version, "os_name": "posix",
            "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "implementation_version": version, "platform_release": "", "platform_version": ""}


def test_the_supported_pythons_are_one_list():
    versions = supported()
    assert len(versions) >= 2, f"pyproject.toml's classifiers name {versions}"
    lowest = SpecifierSet(PYPROJECT["project"]["requires-python"])
    oldest = versions[0]
    assert f"{oldest}.0" in lowest and f"{int(oldest.split('.')[0])}.{int(oldest.split('.')[1]) - 1}.99" not in lowest, (
        f"requires-python {lowest} does not start at the oldest supported Python, {oldest}")
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pythons.yml").read_text())
    images = workflow["jobs"]["book-and-check"]["strategy"]["matrix"]["image"]
    tested = sorted({m.group(1) for image in images if (m := re.fullmatch(r"python:(3\.\d+)-\w+", image))},
                    key=versions.index)
    assert tested == versions, f"pythons.yml tests {tested}, pyproject.toml supports {versions}"
    readme = (ROOT / "README.md").read_text()
    named = ", ".join(versions[:-1]) + f" or {versions[-1]}"
    assert f"Python {named}" in readme, f"the README does not name the supported Pythons as `Python {named}`"
    binder = (ROOT / "binder" / "runtime.txt").read_text().strip().removeprefix("python-")
    assert binder in versions, f"Binder runs Python {binder}, not a supported one ({versions})"


@pytest.mark.parametrize("version", ["3.11.0", "3.11.2", "3.11.9", "3.12.0", "3.13.0"])
def test_the_lock_pins_every_package_once_for_each_supported_python(version):
    assert version.rsplit(".", 1)[0] in supported() or pytest.skip(f"{version} is not supported")
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    requirements = [Requirement(line) for line in lines if line and not line.startswith("-")]
    environment = marker_environment(version)
    holding = [r for r in requirements if r.marker is None or r.marker.evaluate(environment)]
    inexact = [str(r) for r in requirements if not re.fullmatch(r"==[^*,]+", str(r.specifier))]
    assert not inexact, f"requirements.txt: pins that are not exact: {inexact}"
    names = [normalized(r.name) for r in holding]
    assert len(names) == len(set(names)), f"Python {version}: two pins hold for {sorted({n for n in names if names.count(n) > 1})}"
    wanted = [Requirement(text).name for line in (ROOT / "requirements.in").read_text().splitlines()
              if (text := line.split("#", 1)[0].strip())]
    missing = [name for name in wanted if normalized(name) not in names]
    assert not missing, f"Python {version}: requirements.in's {missing} have no pin in requirements.txt"
    assert pins_where(environment) == {normalized(r.name): str(r.specifier)[2:] for r in holding}


def fake_python(folder: Path, name: str, version: str) -> Path:
    """A program that answers find_python.sh's question as a Python of ``version`` would."""
    program = folder / name
    program.write_text(f'#!/bin/sh\necho "$0 {version}"\n')
    program.chmod(0o755)
    return program


def find(path: Path, requested: str = "", venv: Path | None = None) -> subprocess.CompletedProcess:
    """find_python.sh with a PATH of ``path`` (the fake Pythons) and the few tools it uses: no
    Python of this machine's."""
    tools = path / "tools"
    tools.mkdir(exist_ok=True)
    for tool in ("cut", "sort", "tr", "sed", "cat"):
        if not (tools / tool).exists():
            (tools / tool).symlink_to(shutil.which(tool))
    return subprocess.run(["/bin/sh", str(FIND_PYTHON), str(venv or path / "no-venv"), *supported()],
                          env={"PATH": f"{path}:{tools}", "REQUESTED": requested}, capture_output=True, text=True)


def test_make_finds_a_supported_python_or_says_in_one_line_which_work(tmp_path):
    old = fake_python(tmp_path, "python3", "3.9.18")
    newest = supported()[-1]
    other = fake_python(tmp_path, f"python{newest}", f"{newest}.1")
    found = find(tmp_path)
    assert (found.returncode, found.stdout.split()) == (0, [str(other), f"{newest}.1"]), found
    refused = find(tmp_path, requested=str(old))
    assert refused.returncode == 1 and refused.stdout == "", refused
    message = refused.stderr.strip()
    assert "\n" not in message and "3.9.18" in message and "PYTHON=" in message, message
    assert all(version in message for version in supported()), message
    other.unlink()
    alone = find(tmp_path)
    assert alone.returncode == 1 and "python3 is Python 3.9.18" in alone.stderr, alone
    # A venv made from a supported interpreter keeps it, whatever python3 is now.
    venv = tmp_path / "venv"
    venv.mkdir()
    kept = fake_python(tmp_path, "kept-python", f"{supported()[0]}.2")
    (venv / ".interpreter").write_text(f"{kept} {supported()[0]}.2\n")
    assert find(tmp_path, venv=venv).stdout.split() == [str(kept), f"{supported()[0]}.2"]


def test_make_env_makes_the_venv_anew_from_the_python_named(tmp_path):
    other = fake_python(tmp_path, "another-python", f"{supported()[-1]}.0")
    planned = subprocess.run(["make", "-n", "env", f"PYTHON={other}"], cwd=ROOT, capture_output=True, text=True)
    assert f"rm -rf .venv && {other} -m venv .venv" in planned.stdout, planned.stdout + planned.stderr
    stamp = re.search(r"touch (\.venv/\.built-from-\w+)", planned.stdout).group(1)
    assert not (ROOT / stamp).exists(), "the stamp of an environment made from another Python is this one's"
