"""The fixture book's reader check for exercise 1 of 1.2 (hand-written, as a book's checks are):
chapter 1's exercise, in a package of its own (page 1.2's front matter names it), beside
chapter 2's exercise 1 in chapter_lib.exercises."""

from chapter_lib.chapter1_exercises.harness import report, run_case

__all__ = ["check_long_words"]


def check_long_words(long_words_fn):
    """Reader check for exercise 1 of 1.2: how many words are longer than four letters."""
    cases = [
        ("no long word", lambda: (long_words_fn("a cat sat") == 0, "'a cat sat' holds none")),
        ("two long words", lambda: (long_words_fn("a little cat sleeps") == 2, "'a little cat sleeps' holds two")),
    ]
    report(1, "check_long_words", [run_case(name, case) for name, case in cases])
