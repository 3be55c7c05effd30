"""The build pipeline, one module per arrow of the data flow (`make` target in brackets).

    book/*.md --extract_library [lib]--> chapter_lib/chapterNN.py (a module per chapter: chapters;
                                        library_names checks the cells' names, library_text
                                        is what the modules say around them)
              --execute_pages [outputs]--> book/*.ipynb (executed; reader_notebook assembles
                                            them, myst_to_notebook makes their markdown
                                            plain CommonMark)
              --draw_diagrams [diagrams]--> book/_diagrams/*.svg
              --site_build [book, html]--> _build/html (Sphinx, through runnable_book.sphinx_ext)
              --print_pdf [pdf]--> _build/pdf/chapter15.pdf (named for the book)
    git --edition--> _build/edition.json (which build this is: every page, the PDF and the
                     published notebooks name it; install_cell: where a notebook's chapter_lib comes from)

``pages`` is what they share: where the pages are, in table-of-contents order, and how a
code cell is named in messages.
"""
