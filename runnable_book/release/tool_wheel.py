"""`make tool-wheel`: the tool's own wheel, runnable-book, from the tracked files of runnable_book/.

    python -m runnable_book.release.tool_wheel _build/tool-wheel

Another book installs the tool from this wheel (runnable_book/README.md says how). It is built
from a copy holding the folder's tracked files alone: setuptools writes build/ and an egg-info
into the folder it builds, and a checkout's __pycache__ or stray files would ride along. No
build isolation: setuptools is the environment's own (an isolated build would fetch it from the
network at every build). Prints the wheel's path.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from runnable_book.common.tested_versions import IN_THE_PACKAGE, tested_versions
from runnable_book.repository import TOOL


def tracked_files() -> list[Path]:
    """The package's files as git tracks them (relative to TOOL), or all but caches outside git."""
    listed = subprocess.run(["git", "ls-files", "-z", "."], cwd=TOOL, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return [Path(name) for name in listed.stdout.split("\0") if name]
    return [path.relative_to(TOOL) for path in sorted(TOOL.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts]


def build(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tool-wheel-") as scratch:
        source = Path(scratch) / "runnable_book"
        for name in tracked_files():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(TOOL / name, source / name)
        # What a new book pins: this book's lock, which the tool is tested with (common/tested_versions.py).
        (source / IN_THE_PACKAGE.relative_to(TOOL)).write_text(tested_versions(), encoding="utf-8")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation", "--no-deps",
                        "--wheel-dir", f"{scratch}/dist", str(source)], check=True)
        (wheel,) = Path(scratch, "dist").glob("runnable_book-*.whl")
        return Path(shutil.move(wheel, out / wheel.name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder to write the wheel into")
    print(build(parser.parse_args(argv).out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
