"""The fixture book's reader check for exercise 1 of 2.2 (hand-written, as a book's checks are)."""

from chapter_lib.exercises.harness import report, run_case

__all__ = ["check_questions"]


def check_questions(questions_fn):
    """Reader check for exercise 1: how many sentences end with a question mark."""
    cases = [
        ("no question", lambda: (questions_fn("Yes.") == 0, "'Yes.' holds none")),
        ("two questions", lambda: (questions_fn("Why? How? Because.") == 2, "'Why? How? Because.' holds two")),
    ]
    report(1, "check_questions", [run_case(name, case) for name, case in cases])
