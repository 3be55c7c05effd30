"""What every exercise of Section 15.11 shares (ours, hand-written, not generated).

The question helper, a text table, and copies of the chapter's code with some names
replaced. The reader checks' harness (how a check runs its cases and prints its verdict)
is the tool's, generated beside this file: :mod:`chapter_lib.exercises.harness`.
"""

from __future__ import annotations

import types

from chapter_lib import chapter15
from chapter_lib.chapter15 import questions

ENG = frozenset({"engineering"})
FINANCE = frozenset({"finance"})
AURORA_REGION_QUERY = "What region does Aurora run in?"  # the attack question of Section 15.9

__all__ = ["ENG", "FINANCE", "AURORA_REGION_QUERY", "question", "chapter_code_with", "print_table"]


def question(qid, qs=None):
    """The ``(id, text, groups, start, goal, expected)`` tuple of one question."""
    return next(q for q in (qs or questions()) if q[0] == qid)


def chapter_code_with(**overrides) -> types.SimpleNamespace:
    """The chapter's functions, line for line, bound to a copy of their globals.

    Every function of :mod:`chapter_lib.chapter15` is re-created from its own code
    object over a *copy* of the module's globals in which ``overrides`` replace some
    names (a longer ``CUES`` table, another ``_is_entity``, a recording ``search``).
    Functions that call each other call the copies, so the override reaches the whole
    chain (``agentic`` -> ``facts_from`` -> ``extract_facts`` -> ``CUES``). The
    chapter's module is not touched: other pages and later cells see the original.

    Returns:
        A namespace holding every name of the chapter module, copies for functions.
    """
    original = vars(chapter15)
    namespace = dict(original)
    namespace.update(overrides)
    for name, value in original.items():
        if name in overrides or not isinstance(value, types.FunctionType):
            continue
        if value.__globals__ is not original:
            continue
        copy = types.FunctionType(value.__code__, namespace, value.__name__,
                                  value.__defaults__, value.__closure__)
        copy.__kwdefaults__ = value.__kwdefaults__
        copy.__doc__ = value.__doc__
        namespace[name] = copy
    return types.SimpleNamespace(**namespace)


def _table(header, rows):
    """A fixed-width text table (deterministic, so nbval can compare it)."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for number, row in enumerate(cells):
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if number == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def print_table(header, rows):
    """Print rows under a header as a fixed-width text table."""
    print(_table(header, rows))
