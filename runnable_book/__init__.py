"""Build tools of the book (ours, not the chapter's): book/*.md -> chapter_lib -> _build."""

from runnable_book import lazy_iri_syntax  # noqa: F401  (before any import of jsonschema: the module says why)
