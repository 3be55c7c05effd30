"""Binder's launch environment (binder/) runs every reader's notebook as the book stores it.

The quick checks of binder/ itself: repo2docker reads a binder/ folder and nothing of the
root (neither its requirements.txt nor pyproject.toml, which would make it install the
build's pins and copy the repository first); binder/requirements.txt has no local reference,
so repo2docker installs it before copying the repository and keeps that layer from one
commit to the next; its pins are the book's own versions; runtime.txt names the book's
Python; postBuild installs the commit's own chapter_lib.

Then the environment as Binder builds it, in a fresh venv (long: pip fetches about sixty
packages): binder/requirements.txt; what repo2docker's base environment gives every Binder
(a kernel and nbconvert: here at the book's own pins); chapter_lib as postBuild installs
it, from a copy of the repository. `jupyter nbconvert --execute` runs every stored reader's
notebook in it, each from a folder of its own (so nothing imports the repository's
chapter_lib), with a Jupyter configuration of its own: every cell runs, the install cell
installs nothing, and every cell prints what the book stores and draws as many figures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fresh_environment import fresh_environment, made_venv
from packaging.markers import default_environment

from runnable_book.interpreters import supported
from runnable_book.interpreters.lock_check import pins_where
from runnable_book.pipeline.pages import notebook_pages
from runnable_book.repository import ROOT
from runnable_book.pipeline.execute_pages import stored_path

BINDER = ROOT / "binder"
LAUNCH_PINS = BINDER / "requirements.txt"
# What repo2docker's base environment has that a notebook run needs (its own environment.yml:
# JupyterLab, the notebook server, ipykernel): here only what nbconvert --execute uses.
BINDER_BASE = ["ipykernel", "nbconvert"]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)$")


@pytest.fixture(scope="module")
def new_venv(tmp_path_factory) -> Path:
    return made_venv(tmp_path_factory)


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    return {normalized(m.group(1)): m.group(2) for line in path.read_text().splitlines()
            if (m := PIN.match(line.split("#", 1)[0].strip()))}


def test_binder_reads_its_own_folder_and_installs_its_pins_before_the_repository():
    assert sorted(p.name for p in BINDER.iterdir()) == ["postBuild", "requirements.in", "requirements.txt", "runtime.txt"]
    lines = [line.split("#", 1)[0].strip() for line in LAUNCH_PINS.read_text().splitlines()]
    local = [line for line in lines if line and not PIN.match(line)]
    assert local == [], f"{LAUNCH_PINS} has lines that are no pin (a local reference makes repo2docker copy the repository first): {local}"
    development = pins_where(default_environment())  # (the lock's pins for this Python)
    other = {name: (version, development.get(name)) for name, version in pins(LAUNCH_PINS).items()
             if development.get(name) != version}
    assert other == {}, f"the launch environment pins other versions than the book's (launch, book): {other}"
    assert (BINDER / "runtime.txt").read_text().strip().removeprefix("python-") in supported()
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK), "repo2docker runs postBuild only if it is executable"
    assert re.search(r'^python -m pip install --no-cache-dir --no-deps "\$source"$', post_build.read_text(), re.M)


def test_postbuild_installs_chapter_lib_and_leaves_the_repository_as_committed(tmp_path):
    """Run as Binder runs it, in a checkout of what it reads, its `python` a fresh environment's:
    chapter_lib imports there, and the checkout holds nothing new (setuptools once left build/)."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("pyproject.toml", ".gitignore", "binder"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, checkout / name)
    shutil.copytree(ROOT / "chapter_lib", checkout / "chapter_lib", ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "what postBuild reads"]):
        subprocess.run([*git, *step], cwd=checkout, check=True, capture_output=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", PIP_DISABLE_PIP_VERSION_CHECK="1")
    done = subprocess.run([str(checkout / "binder" / "postBuild")], cwd=checkout, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    subprocess.run([str(venv / "bin" / "python"), "-c", "import chapter_lib.chapter15"], cwd=tmp_path, env=env, check=True)
    left = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=checkout, capture_output=True, text=True).stdout
    assert left == "", f"binder/postBuild left files in the repository: {left}"


# (pip installs the whole launch environment, as Binder does: on a loaded machine that alone has
# taken minutes, so this test's limit is twice the suite's; a hang still fails with its name.)
@pytest.mark.long
@pytest.mark.whole_book  # (every page of the book, executed as a reader's notebook)
@pytest.mark.timeout(1200)
def test_every_readers_notebook_runs_in_binders_launch_environment(new_venv, tmp_path):
    python = fresh_environment(new_venv, tmp_path)
    constraints = tmp_path / "book-pins.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in pins_where(default_environment()).items()))
    source = tmp_path / "repository"  # (pip builds in its source folder: a copy, not the repository)
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copytree(ROOT / "chapter_lib", source / "chapter_lib", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("JUPYTER")}
    # The pins and Binder's base in one resolution (the base at the book's versions, as constraints
    # that add nothing of their own), then postBuild's install. (--no-compile: no bytecode for
    # every module of numpy and matplotlib; what runs compiles its own.)
    for step in (["-r", str(LAUNCH_PINS), "-c", str(constraints), *BINDER_BASE], ["--no-deps", str(source)]):
        done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                               "--no-compile", *step],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, f"pip install {' '.join(step)}:\n{done.stderr[-3000:]}"
    # A Jupyter of its own: no kernel or configuration of this machine's user.
    jupyter = tmp_path / "jupyter"
    env.update(JUPYTER_CONFIG_DIR=str(jupyter / "config"), JUPYTER_DATA_DIR=str(jupyter / "data"),
               JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"), IPYTHONDIR=str(jupyter / "ipython"))
    runs = tmp_path / "runs"
    stored = {}
    for md in notebook_pages():
        if '"cell_type": "code"' not in stored_path(md).read_text():  # (prose only: nothing to run)
            continue
        folder = runs / md.stem
        folder.mkdir(parents=True)
        shutil.copy(stored_path(md), folder)
        stored[md.stem] = json.loads(stored_path(md).read_text())
    done = subprocess.run([str(python), "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                           "--ExecutePreprocessor.timeout=300", *sorted(str(p) for p in runs.glob("*/*.ipynb"))],
                          capture_output=True, text=True, env=env, timeout=1500)
    assert done.returncode == 0, done.stderr[-5000:]
    problems = []
    for stem, book in stored.items():
        ran = json.loads((runs / stem / f"{stem}.ipynb").read_text())
        code = [(b, r) for b, r in zip(book["cells"], ran["cells"]) if b["cell_type"] == "code"]
        for number, (was, now) in enumerate(code, start=1):
            if printed(now) != printed(was):
                problems.append(f"{stem}, code cell {number}: printed {printed(now)[:200]!r}, the book {printed(was)[:200]!r}")
            if figures(now) != figures(was):
                problems.append(f"{stem}, code cell {number}: drew {figures(now)} figure(s), the book {figures(was)}")
        if code and code[0][1]["outputs"]:
            problems.append(f"{stem}: its install cell printed {code[0][1]['outputs']} (chapter_lib and matplotlib are there)")
    assert not problems, "\n".join(problems)


def printed(cell: dict) -> str:
    """What a cell printed and returned as text (streams, results), errors included."""
    parts, stream = [], None  # (a kernel flushes a stream in chunks that vary: merged, as the book stores them)
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append(("" if output["name"] == stream else f"[{output['name']}]") + "".join(output["text"]))
            stream = output["name"]
            continue
        stream = None
        if output["output_type"] == "execute_result":
            parts.append("".join(output["data"].get("text/plain", "")))
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
    return "".join(parts)


def figures(cell: dict) -> int:
    return sum("image/png" in output.get("data", {}) for output in cell.get("outputs", []))
