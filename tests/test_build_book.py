"""tools/pipeline/build_book.py: a page whose code fails is stored with its error; the others go on."""

import nbformat

from tools.pipeline import build_book, stored_outputs

PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A page that fails

```{code-cell} ipython3
print("before the error")
```

```{code-cell} ipython3
{}["missing"]
```

```{code-cell} ipython3
print("never reached")
```
"""

GOOD_PAGE = PAGE.replace('{}["missing"]', 'print("fine")').replace("# A page that fails", "# A page that works")


def test_a_failing_page_is_stored_with_its_error_and_the_next_page_still_runs(tmp_path, monkeypatch):
    failing, good = tmp_path / "failing.md", tmp_path / "good.md"
    failing.write_text(PAGE)
    good.write_text(GOOD_PAGE)
    monkeypatch.setattr(build_book, "notebook_pages", lambda: [failing, good])

    failures = build_book.sync_outputs()

    assert len(failures) == 1 and failures[0].startswith(f"{failing}, code cell 2 (line 18), line 19: KeyError: 'missing'")
    stored = nbformat.read(tmp_path / "failing.ipynb", as_version=4)
    code = stored_outputs.page_code(stored)  # the .md's cells (the reader's notebook adds an install cell)
    assert code[0].outputs[0].text == "before the error\n"
    assert code[1].outputs[0].output_type == "error" and code[1].outputs[0].ename == "KeyError"
    assert code[2].outputs == [], "cells after the error are not run"
    assert stored.metadata.chapter15.inputs_sha256 == build_book.FAILED_DIGEST, "re-executed next time"
    assert stored_outputs.page_with_stored_outputs(failing)[1] == [], "the page still builds from it"
    assert stored_outputs.pairing_problems(failing), "make test fails until the page is fixed"
    assert (tmp_path / "good.ipynb").exists(), "the page after the failing one was executed"
