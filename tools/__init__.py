"""Build tools of the book (ours, not the chapter's): book/*.md -> chapter_lib -> _build."""
