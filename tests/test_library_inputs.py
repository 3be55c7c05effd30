"""What chapter_lib is made of (runnable_book/pipeline/library_inputs.py): the digest the build's
library step is left out on. A prose edit leaves it as it is; each thing the library is generated
from changes it, and putting that thing back gives the digest back."""

import pytest

from runnable_book.bench import rebuild

pytestmark = pytest.mark.whole_book

DIGEST = "from runnable_book.pipeline.library_inputs import library_inputs; print(library_inputs())"


def test_prose_leaves_the_librarys_digest_and_what_the_library_is_made_of_changes_it(scratch_repository):
    copy = scratch_repository.path

    def digest() -> str:
        return scratch_repository.run("-c", DIGEST).stdout.strip()

    first = digest()
    assert len(first) == 64, first
    prose = copy / "book" / "15_07_structured_stores.md"
    prose.write_text(rebuild.edited(prose.read_text()))
    assert digest() == first, "a prose edit changed what the library is made of"

    saved = copy / "book" / "15_08_long_context_rag_cache.md"
    exercises = copy / "book" / "15_11_exercises.md"
    check = copy / "chapter_lib" / "exercises" / "check_3.py"
    edits = {
        "a saved cell's code": (saved, "    return len(tokenize(text))", "    return len(list(tokenize(text)))"),
        "a page's title (its chapter)": (saved, "\n# 15.8 ", "\n# 16.8 "),
        "a page's front matter": (saved, "kernelspec:", "runnable_book:\n  exercises: chapter_lib.other\nkernelspec:"),
        "the exercise page's prose": (exercises, "## Exercise 1", "## Exercise 1\n\nOne more sentence."),
        "a hand-written check": (check, "\n", "\n# a comment\n"),
    }
    for what, (path, old, new) in edits.items():
        text = path.read_text()
        assert old in text, (what, old)
        path.write_text(text.replace(old, new, 1))
        assert digest() != first, f"{what} did not change the library's digest"
        path.write_text(text)
    assert digest() == first


def test_make_checks_library_check_takes_the_record_only_while_nothing_changed(scratch_repository):
    """`extract_library --check --skip-recorded` (`make check`): in sync as recorded after the
    build's library step; once a saved cell changes without a build, out of sync, named."""
    check = ("-m", "runnable_book.pipeline.extract_library", "--check", "--skip-recorded")
    assert "in sync" in scratch_repository.run(*check).stdout  # (no record yet: checked in full)
    scratch_repository.run("-m", "runnable_book.pipeline.artefact_graph", "lib")
    assert "as the build generated it" in scratch_repository.run(*check).stdout
    saved = scratch_repository.path / "book" / "15_08_long_context_rag_cache.md"
    saved.write_text(saved.read_text().replace("    return len(tokenize(text))", "    return len(list(tokenize(text)))"))
    done = scratch_repository.run(*check, check=False)
    assert done.returncode == 1 and "chapter_lib is not in sync with the book" in done.stderr, done.stderr[-2000:]
