"""The W3C HTML checker (Nu, npm ``vnu-jar``) on every page of the built site.

    python -m runnable_book.checks.vnu_check [_build/html]     # what `make validate` runs

Runs vnu.jar once over all pages (Java from Debian: runnable_book/browser/ensure_debian_package.sh). Before the site,
it checks a planted error (``<p>`` inside ``<summary>``, the markup myst-nb used to write)
so a checker that silently checks nothing cannot pass. Prints each error with its page and
line; exits 1 on any error.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from runnable_book.browser.local_site import find_pages
from runnable_book.repository import ROOT

VNU = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
PLANTED = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>planted</title></head>"
           "<body><details><summary><p>Show code</p></summary></details></body></html>\n")


def vnu_errors(files: list[Path]) -> list[str]:
    if not VNU.is_file():
        raise RuntimeError(f"{VNU} is missing: run `make assets` (npm ci)")
    run = subprocess.run(["java", "-jar", str(VNU), "--errors-only", "--format", "json", *map(str, files)],
                         capture_output=True, text=True)
    messages = json.loads(run.stderr or run.stdout or '{"messages": []}')["messages"]
    return [f"{m.get('url', '').removeprefix('file:')}"
            f":{m.get('lastLine', '?')}: {m.get('message', '')}" for m in messages if m.get("type") == "error"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        planted = Path(scratch) / "planted.html"
        planted.write_text(PLANTED)
        if not any("summary" in error for error in vnu_errors([planted])):
            print("vnu_check: the checker missed the planted <p> in <summary>", file=sys.stderr)
            return 2
    pages = [args.site / page for page in find_pages(args.site)]
    errors = vnu_errors(pages)
    root = str(args.site.resolve()) + "/"
    print("\n".join(error.replace(root, "") for error in errors))
    print(f"{len(errors)} HTML error(s) in {len(pages)} pages (W3C Nu checker)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
