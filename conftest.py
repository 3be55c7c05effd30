"""pytest setup for the stored notebooks (`make test-notebooks`: nbval on book/*.ipynb).

Here, at the root, so that it applies however the notebooks are named on the command line
(tests/conftest.py only applies when tests/ is among them). The plugin is the tool's, as any
book runs it (runnable_book/checks/nbval_plugin.py says what it does): the byte-stability
test (tests/test_execute_pages.py) reads what each page printed under it.
"""

pytest_plugins = ["runnable_book.checks.nbval_plugin"]
