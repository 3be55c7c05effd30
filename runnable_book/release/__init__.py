"""`make release VERSION=x.y.z`: a new edition of the book, as one commit and its tag.

    python -m runnable_book.release 15.1.0      # what `make release VERSION=15.1.0` runs

It refuses, changing nothing, a working tree with uncommitted changes (a release is a
commit: its notebooks name it), a version not above the current one, a tag that exists, an
empty "Unreleased" section of CHANGELOG.md, and a red `make test`. Then it bumps
chapter_lib's version in pyproject.toml and records the library the release holds
(``[tool.editions]``: runnable_book/pipeline/edition.py), moves CHANGELOG.md's "Unreleased" entries
under the version with the date (runnable_book/release/changelog.py), rewrites the reader's notebooks,
whose install cells name the version and the release's tag, commits, and tags ``v<version>``.
Publishing is the workflow's (.github/workflows/pages.yml): pushing the commit publishes it,
after `make test` passes there. docs/publishing.md says how a release reaches readers.
"""
