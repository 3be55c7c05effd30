"""nbval on a book's stored notebooks, as the tool executes its pages: a pytest plugin.

    python -m pytest -p runnable_book.checks.nbval_plugin --nbval --nbval-current-env book/*.ipynb

(`python -m runnable_book test` runs it so; this book's conftest.py loads it for `make
test-notebooks`.) nbval's kernel gets the settings of the outputs step
(runnable_book/pipeline/execute_pages.py: the SVG copy of each figure, its fixed ids and date,
history kept so execution counts read as in a notebook), and what each page printed is
written to _build/test-run/executed/ (runnable_book/checks/nbval_run.py), where a
byte-stability test can read it instead of executing every page a second time.
"""


import pytest


def pytest_configure(config):
    if getattr(config.option, "nbval", False):
        from nbval import plugin

        from runnable_book.checks.nbval_run import RecordingKernel

        plugin.RunningKernel = RecordingKernel  # (nbval's IPyNbFile.setup starts one per notebook)


def pytest_collection_modifyitems(items):
    """nbval compares every stored text output; it skips images (PNG bytes are not a
    comparison of what a reader reads), and the SVG copy of each figure that the PDF prints
    is an image too (its bytes are held by the byte-stability test)."""
    for item in items:
        notebook = getattr(item, "parent", None)
        skipped = getattr(notebook, "skip_compare", None)
        if skipped is not None and "image/svg+xml" not in skipped:
            notebook.skip_compare = skipped + ("image/svg+xml",)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    kernel = getattr(getattr(item, "parent", None), "kernel", None)
    if hasattr(kernel, "failed") and report.failed:
        kernel.failed = True


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    """After a notebook's last cell (before nbval stops its kernel), keep what the run printed."""
    notebook = getattr(item, "parent", None)
    kernel = getattr(notebook, "kernel", None)
    if hasattr(kernel, "keep") and (nextitem is None or nextitem.parent is not notebook):
        kernel.keep(notebook.nb, notebook.path)
