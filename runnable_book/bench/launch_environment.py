"""``make bench-launch``: Binder's launch environment beside the development environment (ours).

    python -m runnable_book.bench.launch_environment [--keep]

Each environment is installed by pip into a fresh virtual environment of this Python, with
pip's cache off (every file fetched, as on Binder's first build of a commit), one after the
other:

- launch: ``binder/requirements.txt`` (what Binder installs beyond its own JupyterLab and
  kernel), then chapter_lib as ``binder/postBuild`` installs it;
- development: ``requirements.txt`` (what `make env` installs; its last line is chapter_lib).

For each: its pins (``name==version`` lines), the install's wall seconds, and the megabytes
the environment adds to an empty venv. The launch environment's goal is at most a third of
each; the ratios are printed beside the figures. Writes _build/bench/launch.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "bench"
VENVS = OUT / "launch-venvs"
LAUNCH = ROOT / "binder" / "requirements.txt"
DEVELOPMENT = ROOT / "requirements.txt"
GOAL = 1 / 3


def pins(requirements: Path) -> int:
    return sum("==" in line.split("#", 1)[0] for line in requirements.read_text().splitlines())


def megabytes(folder: Path) -> float:
    return sum(path.lstat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink()) / 1e6


def fresh_venv(name: str) -> Path:
    venv = VENVS / name
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return venv


def pip(venv: Path, *arguments: str) -> None:
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-cache-dir",
                           "--disable-pip-version-check", *arguments], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"pip install {' '.join(arguments)} failed:\n{done.stderr[-3000:]}")


def measure(name: str, requirements: Path, after: list[str] | None, empty_mb: float) -> dict:
    venv = fresh_venv(name)
    started = time.monotonic()
    pip(venv, "-r", str(requirements))
    if after:
        pip(venv, *after)
    seconds = time.monotonic() - started
    return {"file": requirements.relative_to(ROOT).as_posix(), "pins": pins(requirements),
            "install_seconds": round(seconds, 1), "megabytes": round(megabytes(venv) - empty_mb, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runnable_book.bench.launch_environment", description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help=f"keep the environments (in {VENVS.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    empty_mb = megabytes(fresh_venv("empty"))
    # binder/postBuild's `pip install --no-deps .`, from a copy: setuptools builds in the source
    # folder, and would leave build/ in the repository.
    source = VENVS / "chapter_lib-source"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copytree(ROOT / "chapter_lib", source / "chapter_lib", ignore=shutil.ignore_patterns("__pycache__"))
    launch = measure("launch", LAUNCH, ["--no-deps", str(source)], empty_mb)
    development = measure("development", DEVELOPMENT, None, empty_mb)
    ratios = {key: round(launch[key] / development[key], 3) for key in ("pins", "install_seconds", "megabytes")}
    result = {"python": f"{sys.version_info[0]}.{sys.version_info[1]}", "pip_cache": "off",
              "empty_venv_megabytes": round(empty_mb, 1), "launch": launch, "development": development,
              "launch_over_development": ratios, "goal": "at most a third of each",
              "within_goal": {key: ratio <= GOAL for key, ratio in ratios.items()}}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "launch.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'':14}{'pins':>6}{'install s':>11}{'MB':>9}")
    for name, row in (("launch", launch), ("development", development)):
        print(f"{name:14}{row['pins']:>6}{row['install_seconds']:>11.1f}{row['megabytes']:>9.1f}")
    print(f"{'ratio':14}{ratios['pins']:>6.2f}{ratios['install_seconds']:>11.2f}{ratios['megabytes']:>9.2f}"
          f"   (goal: at most {GOAL:.2f} each; MB added to an empty venv of {empty_mb:.1f} MB; pip's cache off)")
    print(f"written: {(OUT / 'launch.json').relative_to(ROOT)}")
    if not args.keep:
        shutil.rmtree(VENVS, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
