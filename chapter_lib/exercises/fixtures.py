"""The documents exercises 3 and 4 start from (ours, hand-written, not generated).

The chapter's :class:`Doc` records whether a text is trusted, not where it came from.
These copies of the corpus also carry a source URI and a date, which the exercises'
start cells hand to the reader (``sourced_corpus()``, ``with_trust(...)``) and the
checks build their cases from.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from chapter_lib.chapter15 import Doc, corpus

__all__ = ["SourcedDoc", "CORPUS_SOURCES", "ALLOWLIST", "SOURCE_PRECEDENCE", "sourced", "sourced_corpus",
           "with_trust", "poisoned_corpus"]

@dataclass(frozen=True)
class SourcedDoc(Doc):
    """A chapter :class:`Doc` plus where its text came from and when it was updated.

    ``uri`` names the source system; ``updated`` is an ISO date. The chapter's
    functions accept it anywhere they accept a Doc.
    """

    uri: str = ""
    updated: str = ""


# Where each chapter document came from (ours: the chapter's Doc has no such fields).
CORPUS_SOURCES = {
    "d01": ("cmdb://projects/falcon", "2025-09-12"),
    "d02": ("cmdb://systems/atlas", "2025-10-01"),
    "d03": ("cmdb://systems/aurora", "2025-11-03"),
    "d04": ("https://wiki.corp.example/falcon/release", "2026-01-15"),
    "d05": ("https://wiki.corp.example/falcon/dashboard", "2026-02-02"),
    "d06": ("https://wiki.corp.example/telemetry/deprecations", "2024-05-20"),
    "d07": ("https://wiki.corp.example/falcon/reviews", "2026-03-06"),
    "d08": ("https://wiki.corp.example/globex/codenames", "2025-07-14"),
    "d09": ("https://finance.corp.example/budgets/falcon", "2026-01-05"),
    "d10": ("upload://inbox/note-4411.txt", "2026-06-30"),
}
# Sources whose text may vouch for a fact (exercise 4), highest precedence first
# (exercise 3): the CMDB is the system of record, the wiki is edited by hand.
ALLOWLIST = ("cmdb://", "https://wiki.corp.example/")
SOURCE_PRECEDENCE = {"cmdb://": 2, "https://wiki.corp.example/": 1}


def sourced(doc, uri, updated, **changes):
    """A :class:`SourcedDoc` copy of a chapter doc (optionally with fields changed)."""
    fields = {f.name: getattr(doc, f.name) for f in dataclasses.fields(Doc)}
    fields.update(changes)
    return SourcedDoc(**fields, uri=uri, updated=updated)


def sourced_corpus(docs=None):
    """A copy of the corpus in which every document carries its source URI and date."""
    return tuple(sourced(d, *CORPUS_SOURCES[d.id]) for d in (docs or corpus()))


def with_trust(docs, doc_id, trusted):
    """A copy of ``docs`` with one document's ``trusted`` flag set to ``trusted``."""
    return tuple(dataclasses.replace(d, trusted=trusted) if d.id == doc_id else d for d in docs)


def poisoned_corpus():
    """A copy of the sourced corpus in which d10 is (wrongly) marked trusted."""
    return with_trust(sourced_corpus(), "d10", True)
