"""Sphinx extension: small fixes to the pages Jupyter Book 1.x writes.

1. No console error. sphinx-thebe (which Jupyter Book 1.x always loads) adds its inline configuration script
each time the environment is read, so a page declares ``const THEBE_JS_URL`` twice and the
browser logs "Identifier 'THEBE_JS_URL' has already been declared". We keep the first
copy of every script tag. (The copies differ only in an empty filename being ``None`` or
``""``, so Sphinx's own equality does not see them as the same.)

(Diagrams: tools/sphinx_diagrams.py draws them at build time and loads no mermaid code.)
"""


def script_key(js) -> tuple:
    return (js.filename or "", js.priority, tuple(sorted(js.attributes.items())))


def drop_needless_scripts(app, pagename, templatename, context, doctree):
    if "script_files" not in context:
        return
    seen, kept = set(), []
    for js in context["script_files"]:
        if script_key(js) in seen:
            continue
        seen.add(script_key(js))
        kept.append(js)
    context["script_files"] = kept


def setup(app):
    app.connect("html-page-context", drop_needless_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
