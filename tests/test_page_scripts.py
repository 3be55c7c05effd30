"""The tools' page scripts (runnable_book/common/page_scripts.py): what a tool runs in a page with
Playwright lives in the `.mjs` of its module's name, and reaches the page as one exported
function's text.

* Every exported function of every page script is found, whole: its text compiles as a
  JavaScript expression (Node), so no function is cut short at an inner `}`.
* A function asked for that is not there is an error naming the file.
* eslint (make test-sources) holds a page script's top level to `export const`: a helper
  declared beside the function, which would be undefined in the page, is reported.

The page scripts are found from the tree: each `.mjs` under runnable_book/ whose `.py` of the same
name calls page_function.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from runnable_book.common.page_scripts import PageScriptError, page_function

ROOT = Path(__file__).resolve().parent.parent
EXPORT = re.compile(r"^export const (\w+) = ", re.MULTILINE)
ESLINT = ROOT / "node_modules" / ".bin" / "eslint"


def page_scripts() -> list[Path]:
    return sorted(script for script in (ROOT / "runnable_book").rglob("*.mjs")
                  if "node_modules" not in script.parts and script.with_suffix(".py").is_file()
                  and "page_function(" in script.with_suffix(".py").read_text(encoding="utf-8"))


def test_the_tree_has_page_scripts():
    names = {script.relative_to(ROOT).as_posix() for script in page_scripts()}
    assert {"runnable_book/pipeline/print_pdf.mjs", "runnable_book/browser/page_runner.mjs", "runnable_book/checks/site_check.mjs"} <= names, names


def test_every_exported_function_is_found_whole():
    functions = {f"{script.relative_to(ROOT)}: {name}": page_function(script, name)
                 for script in page_scripts() for name in EXPORT.findall(script.read_text(encoding="utf-8"))}
    assert len(functions) > 30, functions.keys()
    # Each as Playwright sends it, an expression: `new Function` compiles it without running it.
    compiled = subprocess.run(
        ["node", "-e", "const functions = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
                       "const broken = Object.entries(functions).flatMap(([name, text]) => {"
                       " try { new Function(`return (${text});`); return []; } catch (error) { return [`${name}: ${error.message}`]; } });"
                       "console.log(JSON.stringify(broken));"],
        input=json.dumps(functions), capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(compiled.stdout) == []


def test_a_function_not_in_its_script_is_an_error_naming_the_file(tmp_path):
    script = tmp_path / "planted.mjs"
    script.write_text("export const there = () => {\n    return 1;\n};\n")
    assert page_function(script, "there") == "() => {\n    return 1;\n}"
    with pytest.raises(PageScriptError, match=r"planted\.mjs: no `export const missing = \.\.\.;`"):
        page_function(script, "missing")
    # A one-line function before a block: its match would run on to the block's end.
    script.write_text("export const one = () => 1;\n\n" + script.read_text())
    with pytest.raises(PageScriptError, match=r"planted\.mjs: `export const one` must be a block"):
        page_function(script, "one")
    assert page_function(script, "there") == "() => {\n    return 1;\n}"


@pytest.mark.skipif(not ESLINT.is_file(), reason="eslint is installed by make assets (npm ci)")
def test_eslint_reports_a_helper_beside_a_page_function():
    """Linted as if it were a page script of the browser driver (--stdin-filename: nothing is
    written to the tree)."""
    planted = "const helper = 1;\n\nexport const uses = () => {\n    return helper;\n};\n"
    linted = subprocess.run([str(ESLINT), "--stdin", "--stdin-filename", "runnable_book/browser/planted.mjs"],
                            cwd=ROOT, input=planted, capture_output=True, text=True, timeout=120)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert "A page script's top level is `export const" in linted.stdout, linted.stdout
    clean = planted.replace("const helper = 1;\n\n", "").replace("return helper;", "const helper = 1;\n    return helper;")
    linted = subprocess.run([str(ESLINT), "--stdin", "--stdin-filename", "runnable_book/browser/planted.mjs"],
                            cwd=ROOT, input=clean, capture_output=True, text=True, timeout=120)
    assert linted.returncode == 0, linted.stdout + linted.stderr
