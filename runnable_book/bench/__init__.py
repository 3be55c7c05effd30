"""Numbers, not checks (`make bench`, written to _build/bench/); timings are never asserted.

``run_in_browser``  first-click bytes and time to first output (`make bench-run`)
``page_weight``     bytes on the wire and requests per page; Lighthouse with --lighthouse
``rebuild``         `make book` after a prose edit against `jupyter-book build .`
``pdf_build``       `make pdf`'s two steps, pages and bytes (`make bench-pdf`)
``launch_environment``  Binder's launch environment beside the development one (`make bench-launch`)
``cut_answer``      what Chromium hands a page of an answer cut before it read (run by hand)
"""
