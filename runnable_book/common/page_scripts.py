"""The JavaScript the tools run in a page (Playwright's ``page.evaluate`` and
``wait_for_function``), kept in ``.mjs`` files beside the Python that runs it, where eslint
and ``tsc --checkJs`` read it (``make test-sources``; eslint.config.mjs, tsconfig.page.json),
not in Python strings where nothing does.
"""

from __future__ import annotations

import re
from pathlib import Path

from runnable_book.repository import ROOT


class PageScriptError(Exception):
    """A page script asked for is not in its file as it should be; names the file."""


def page_function(script: Path, name: str) -> str:
    """The function `export const <name> = ...;` of a .mjs file, as the text Playwright's
    page.evaluate calls: from after `=` to the `}` ending it, the first line at the left margin
    that starts with `}`. Only that text reaches the page, not the module: so eslint holds
    such a file's top level to `export const` alone (a helper beside the function would be
    undefined in the page)."""
    found = re.search(rf"^export const {name} = (.*?^}}[^\n]*?);$", script.read_text(), re.MULTILINE | re.DOTALL)
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    if not found:
        raise PageScriptError(f"{shown}: no `export const {name} = ...;` in it")
    if "\nexport const " in found.group(1):  # (a one-line function: the match ran on to the next one's end)
        raise PageScriptError(f"{shown}: `export const {name}` must be a block ending with a line `}};`, "
                              "not one line (only the function's own text reaches the page)")
    return found.group(1)
