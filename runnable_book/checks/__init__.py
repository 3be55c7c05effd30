"""Checks of the built site (`make test-site`, `make validate`), each also a command:

``site_check``  every page as a reader loads it: console, links, images, other hosts, favicon
``axe_check``   axe-core, light and dark mode (0 serious or critical violations)
``vnu_check``   the W3C HTML checker (Java; `make validate`)
``run_check``   "Run in your browser": every page's cells run and print the stored outputs

and of the stored notebooks: ``nbval_plugin`` (nbval re-executes each and compares every output).
"""
