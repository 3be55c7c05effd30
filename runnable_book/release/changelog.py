"""CHANGELOG.md's "Unreleased" section moved under a release (Keep a Changelog 1.1.0)."""

from __future__ import annotations

import re

UNRELEASED = "## [Unreleased]"
RELEASE_HEADING = re.compile(r"^## \[", re.M)
SUBSECTION = re.compile(r"^### .+$", re.M)


class ChangelogError(Exception):
    """CHANGELOG.md cannot be released as it is: says why."""


def unreleased_section(text: str) -> tuple[int, int]:
    """Where the "Unreleased" section's body starts and ends (after its heading, before the next release)."""
    start = text.find(UNRELEASED + "\n")
    if start < 0:
        raise ChangelogError(f"CHANGELOG.md has no `{UNRELEASED}` heading to release")
    body = start + len(UNRELEASED) + 1
    following = RELEASE_HEADING.search(text, body)
    return body, following.start() if following else len(text)


def entries(body: str) -> dict[str, str]:
    """The section's subsections ("### Added", ...) with their entries, in order (blank: none)."""
    found: dict[str, str] = {}
    headings = list(SUBSECTION.finditer(body))
    if body[: headings[0].start() if headings else len(body)].strip():
        found[""] = body[: headings[0].start()].strip()  # entries above any subsection heading
    for heading, following in zip(headings, [*headings[1:], None]):
        found[heading.group(0)] = body[heading.end(): following.start() if following else len(body)].strip()
    return found


def released(text: str, version: str, date: str) -> str:
    """``text`` with the Unreleased entries under ``## [version] - date``, and an Unreleased
    section above it with the same subsection headings, empty, for the next changes."""
    body_start, body_end = unreleased_section(text)
    sections = entries(text[body_start:body_end])
    kept = {heading: content for heading, content in sections.items() if content}
    if not kept:
        raise ChangelogError("CHANGELOG.md's Unreleased section has no entry: a release says what changed")
    if re.search(rf"^## \[{re.escape(version)}\]", text, re.M):
        raise ChangelogError(f"CHANGELOG.md already has a section for {version}")
    empty = "".join(f"\n{heading}\n" for heading in sections if heading)
    release = "".join(f"\n{heading}\n\n{content}\n" if heading else f"\n{content}\n" for heading, content in kept.items())
    return f"{text[:body_start]}{empty}\n## [{version}] - {date}\n{release}\n{text[body_end:]}"
