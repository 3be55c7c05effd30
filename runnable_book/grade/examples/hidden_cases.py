"""Hidden cases for chapter 15's checked exercises: an example of the file ``HIDDEN=`` names.

An instructor keeps a file like this outside the book (for example ``course/hidden_cases.py``)
and grades with ``make grade SUBMISSIONS=... HIDDEN=course/hidden_cases.py``. Only the
grader reads it: it is never in the site, the notebooks, the wheel or the sandbox (the grader
runs these cases itself and sends the sandbox only the arguments of each call they make of the
student's function: runnable_book/grade/hidden.py), and a student's feedback says how many hidden cases
passed, never what they are.

The format: a function named after a check (``check_router``), taking the same functions
the check takes, returning the extra cases as ``(name, case)`` pairs, where ``case()``
returns ``(ok, why)``, as the book's own checks build theirs
(chapter_lib/exercises/check_*.py). A case that raises fails, naming what it raised.
Anything of ``chapter_lib`` may be imported. The cases must be deterministic (seed any
randomness): each run of them must make the same calls given the same answers. Each hidden
case weighs 1, as a book case with no ``weights:`` entry does: the points are the weight of the
cases passed, visible and hidden, out of all of them.
"""

from chapter_lib.exercises.common import ENG, FINANCE


def check_router(router_fn):
    """Questions the book's check never asks: a router that learned the six visible ones by
    heart (a lookup table) fails them; one that reads the question's features passes."""

    def label(text, groups, allowed):
        def case():
            got = router_fn(text, groups)
            return got in allowed, f"{text!r} -> {got!r} (expected {' or '.join(map(repr, allowed))})"
        return case

    return [
        ("an unseen one-hop question", label("Who owns Falcon?", ENG, ["direct"])),
        ("an unseen chained question", label("Which region stores the telemetry of the system Falcon depends on?",
                                             ENG, ["multi_hop"])),
        ("an unseen restricted question", label("What is the annual budget of Project Falcon?", ENG, ["restricted"])),
        ("the same question for a finance caller", label("What is the annual budget of Project Falcon?", FINANCE,
                                                         ["direct", "multi_hop"])),
    ]
