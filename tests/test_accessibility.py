"""axe-core finds no serious or critical violation, and no content outside every landmark
(region), on any page, in light or dark mode.

Needs Debian's Chromium and the built book, like tests/test_browser.py. The planted tests
prove the audit really reports a violation, on a copy of the build with one planted: a button
without a name, and the footer's offline controls in Bootstrap's grey (3.99:1 in dark mode),
which the audit sees only because it audits pages with the book's service worker running.
"""

from __future__ import annotations

import shutil

import pytest

from runnable_book.checks.axe_check import audit_site
from runnable_book.browser.local_site import find_pages

pytestmark = [pytest.mark.site, pytest.mark.browser]


def test_no_serious_or_critical_axe_violation_on_any_page(site):
    problems = audit_site(site)
    assert not problems, f"{len(problems)} axe violation(s):\n" + "\n".join(problems)


def audited_with(site, tmp_path, old: str, new: str) -> tuple[str, list[str]]:
    """A copy of the site whose first chapter page has `old` replaced by `new` once, audited:
    that page's name and what the audit found on it."""
    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    page = next(p for p in find_pages(copy) if p.startswith("book/"))
    path = copy / page
    path.write_text(path.read_text().replace(old, new, 1))
    return page, audit_site(copy, pages=[page])


def test_a_planted_violation_is_reported_in_both_modes(site, tmp_path):
    # A button with no name: screen readers announce only "button" (axe: button-name, critical).
    page, problems = audited_with(site, tmp_path, "</main>", '<button type="button"></button></main>')
    for mode in ("light", "dark"):
        assert any(p.startswith(f"{page} ({mode}): critical button-name") for p in problems), problems


def test_the_audit_sees_the_footers_offline_controls(site, tmp_path):
    grey = "<style>.offline-control.btn-outline-secondary { color: #6c757d !important; }</style></head>"
    page, problems = audited_with(site, tmp_path, "</head>", grey)
    assert any(p.startswith(f"{page} (dark): serious color-contrast") and "offline" in p for p in problems), problems


def test_content_outside_every_landmark_is_reported(site, tmp_path):
    """axe's region rule (moderate, so blocking by name) runs: it is not disabled."""
    page, problems = audited_with(site, tmp_path, "</body>", "<p>Outside every landmark</p></body>")
    for mode in ("light", "dark"):
        assert any(p.startswith(f"{page} ({mode}): moderate region") for p in problems), problems
