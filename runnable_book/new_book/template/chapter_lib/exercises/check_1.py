"""The reader check of exercise 1 (1.2): written by the book's author, as every check is.

A check runs its cases with ``run_case`` and prints its verdict with ``report`` (the tool's
harness, which `make book` writes beside this file): the page marks the exercise done on its
``PASS``, and the grader gives the points its cases earn.
"""

from chapter_lib.exercises.harness import report, run_case

__all__ = ["check_longest"]


def check_longest(longest_fn):
    """Reader check for exercise 1: the longest word, the first of the longest on a tie."""
    cases = [
        ("one word", lambda: (longest_fn("runs") == "runs", "'runs' is its own longest word")),
        ("the longest", lambda: (longest_fn("a page runs everywhere") == "everywhere", "'everywhere' is longest")),
        ("the first on a tie", lambda: (longest_fn("cells pages") == "cells", "'cells' comes before 'pages'")),
    ]
    report(1, "check_longest", [run_case(name, case) for name, case in cases])
