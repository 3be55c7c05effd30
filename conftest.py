"""pytest setup for the stored notebooks (`make test-notebooks`: nbval on book/*.ipynb).

Here, at the root, so that it applies however the notebooks are named on the command line
(tests/conftest.py only applies when tests/ is among them)."""


def pytest_collection_modifyitems(items):
    """nbval compares every stored text output; it skips images (PNG bytes are not a
    comparison of what a reader reads), and the SVG copy of each figure that the PDF prints
    (tools/pipeline/stored_outputs.py's kernel setup, which nbval's kernel does not have)
    is an image too."""
    for item in items:
        notebook = getattr(item, "parent", None)
        skipped = getattr(notebook, "skip_compare", None)
        if skipped is not None and "image/svg+xml" not in skipped:
            notebook.skip_compare = skipped + ("image/svg+xml",)
