"""Which chapter a page is in, and so which module of ``chapter_lib`` keeps what it saves.

A page's chapter is the number its title starts with, as the book numbers it: "15.2 One-shot
RAG" is in chapter 15, and so is "15 Advanced and Agentic Retrieval", the chapter's opening,
whose words are the chapter's title. Nothing else names a chapter: a book with pages titled
"16.1 ..." has a chapter 16, and its `# @save` cells go to ``chapter_lib/chapter16.py``.
A page with no number ("References") is in no chapter and may save nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

# "15.2 One-shot RAG" -> "15"; "15 Advanced ..." -> "15" (its title: "Advanced ...")
NUMBERED = re.compile(r"(?P<chapter>\d+)(?P<section>(?:\.\d+)*)\s+(?P<words>\S.*)")


def chapter_of(title: str) -> str | None:
    """The chapter a page with this title is in ("15"), or None for an unnumbered page."""
    numbered = NUMBERED.fullmatch(title.strip())
    return numbered.group("chapter") if numbered else None


def chapter_title(title: str) -> tuple[str, str] | None:
    """(number, its words) when this title is a chapter's own ("15 Advanced ..."), else None."""
    numbered = NUMBERED.fullmatch(title.strip())
    if numbered is None or numbered.group("section"):
        return None
    return numbered.group("chapter"), numbered.group("words")


def section_name(title: str) -> str:
    """How generated text names a page: "15.11 Exercises" -> "Section 15.11", "15 Advanced ..."
    -> "Chapter 15", an unnumbered page by its title."""
    numbered = NUMBERED.fullmatch(title.strip())
    if numbered is None:
        return title.strip()
    if numbered.group("section"):
        return f"Section {numbered.group('chapter')}{numbered.group('section')}"
    return f"Chapter {numbered.group('chapter')}"


def module_stem(chapter: str) -> str:
    """The name of the chapter's module in chapter_lib: chapter 15 -> ``chapter15``."""
    return f"chapter{chapter}"


def module_path(library: Path, chapter: str) -> Path:
    return library / f"{module_stem(chapter)}.py"


def chapter_of_module(path: Path) -> str | None:
    """The chapter a generated module keeps (``chapter15.py`` -> "15"), None for any other module."""
    found = re.fullmatch(r"chapter(\d+)", path.stem)
    return found.group(1) if found else None
