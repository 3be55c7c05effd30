"""Accessibility audit of the built site with axe-core, in light and dark mode.

    python -m runnable_book.checks.axe_check [_build/html] [--page book/x.html ...] [--all-impacts]

Every page is served on 127.0.0.1 (runnable_book/browser/local_site.py) and opened in Debian's
Chromium; axe-core (npm, installed by `make assets`) is injected and run on the whole
document, theme chrome included, once in light mode and once after switching the page to
dark mode the way the theme's own button does. A violation is a problem when axe rates
its impact serious or critical, or its rule is in BLOCKING_RULES (--all-impacts: every
violation). Exits 1 on any problem.

Each page is audited as a reader sees it: the book's service worker runs, and a page is
audited once its footer says what is kept offline, with its controls ("Keep this book for
offline use", "Remove the offline copy"), which offline_page.mjs draws only then.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from runnable_book.browser.chromium import JS_DARK_THEME, VIEWPORT, keep_on_host, launch, wait_for_page_scripts
from runnable_book.browser.local_site import LocalSite, find_pages, is_redirect_page
from runnable_book.browser.page_state import wait_until, wait_until_still
from runnable_book.common.page_scripts import page_function
from runnable_book.repository import ROOT

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = {"serious", "critical"}
# Rules that are problems whatever axe rates them. region (moderate): content outside every
# landmark is skipped by a screen reader's list of landmarks (the theme's sidebar logo was).
BLOCKING_RULES = {"region"}
# axe's violations, its experimental rules too (axe_check.mjs says why).
JS_RUN_AXE = page_function(Path(__file__).with_suffix(".mjs"), "runAxe")
JS_AXE_LOADED = page_function(Path(__file__).with_suffix(".mjs"), "axeLoaded")
# The footer says what is kept offline (or that this browser keeps nothing).
JS_OFFLINE_FOOTER_SHOWN = page_function(Path(__file__).with_suffix(".mjs"), "offlineFooterShown")
# The first page waits for the service worker to install and activate.
OFFLINE_FOOTER_TIMEOUT_MS = 60_000


def audit_page(page, site: LocalSite, page_name: str, impacts: set[str] | None) -> list[str]:
    """Violations on one page as readable strings naming page, mode, rule and elements."""
    problems = []
    page.emulate_media(color_scheme="light")
    page.goto(site.url(page_name), wait_until="load")
    wait_for_page_scripts(page)  # copy buttons and the theme's controls are audited too
    wait_until(page, JS_OFFLINE_FOOTER_SHOWN, timeout=OFFLINE_FOOTER_TIMEOUT_MS)  # and the footer's
    for mode in ("light", "dark"):
        if mode == "dark":
            page.emulate_media(color_scheme="dark")
            page.evaluate(JS_DARK_THEME)
        wait_until_still(page)  # contrast is judged on what is painted: the theme's transitions ended
        if not page.evaluate(JS_AXE_LOADED):
            page.add_script_tag(path=str(AXE))
        for violation in page.evaluate(JS_RUN_AXE):
            if impacts is None or violation["impact"] in impacts or violation["id"] in BLOCKING_RULES:
                targets = violation["targets"]
                shown = ", ".join(targets[:3]) + (f" and {len(targets) - 3} more" if len(targets) > 3 else "")
                problems.append(f"{page_name} ({mode}): {violation['impact']} {violation['id']}: "
                                f"{violation['help']} [{len(targets)}: {shown}]")
    return problems


def audit_site(root: Path, pages: list[str] | None = None, impacts: set[str] | None = BLOCKING_IMPACTS) -> list[str]:
    if not AXE.is_file():
        raise RuntimeError(f"{AXE} is missing: run `make assets` (npm ci)")
    root = Path(root)
    # The root index.html only redirects to the first page, which is audited itself.
    pages = pages or [p for p in find_pages(root) if not is_redirect_page(root / p)]
    problems = []
    with LocalSite(root) as site, launch() as browser:
        context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
        # Nothing leaves the machine (the pages request no other host; this makes sure).
        keep_on_host(context, site.origin)
        page = context.new_page()
        for page_name in pages:
            problems += audit_page(page, site, page_name, impacts)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    parser.add_argument("--page", action="append", dest="pages", help="only this page (repeatable)")
    parser.add_argument("--all-impacts", action="store_true", help="report minor and moderate violations too")
    parser.add_argument("--json", type=Path, help="also write the problems here")
    args = parser.parse_args(argv)
    problems = audit_site(args.site, args.pages, None if args.all_impacts else BLOCKING_IMPACTS)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(problems, indent=2) + "\n")
    print("\n".join(problems))
    print(f"{len(problems)} axe violation(s) ({'all impacts' if args.all_impacts else 'serious or critical'})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
