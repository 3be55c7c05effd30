"""Sphinx extension: small fixes to the pages Jupyter Book 1.x writes.

1. No console error. sphinx-thebe (which Jupyter Book 1.x always loads) adds its inline
   configuration script each time the environment is read, so a page declares
   ``const THEBE_JS_URL`` twice and the browser logs "Identifier 'THEBE_JS_URL' has already
   been declared". We keep the first copy of every script tag. (The copies differ only in
   an empty filename being ``None`` or ``""``, so Sphinx's own equality does not see them
   as the same.)
2. No thebe on a book that does not use it. Jupyter Book 1.x loads sphinx-thebe whether or
   not ``launch_buttons.thebe`` is on, and every page carries its stylesheet, its script,
   an inline ``THEBE_JS_URL`` pointing at unpkg.com (a CDN), and a kernel configuration
   naming a Binder repository that is not ours. This book runs its cells with Pyodide
   instead (runnable_book/sphinx_ext/runner/__init__.py), so with thebe off all of that is left out: two
   requests fewer per page, and no CDN address in any page.

(Diagrams: runnable_book/sphinx_ext/diagrams.py draws them at build time and loads no mermaid code.)
"""

from docutils import nodes

THEBE_FILES = {"sphinx-thebe.js", "sphinx-thebe.css"}
# The inline scripts sphinx-thebe writes: its configuration in <head>, and the two raw
# HTML blocks it appends to every page's doctree.
THEBE_INLINE = ("const THEBE_JS_URL", '<script type="text/x-thebe-config">', "<script>kernelName =")


def script_key(js) -> tuple:
    return (js.filename or "", js.priority, tuple(sorted(js.attributes.items())))


def thebe_enabled(app) -> bool:
    launch_buttons = (app.config.html_theme_options or {}).get("launch_buttons") or {}
    return bool(launch_buttons.get("thebe"))


def is_thebe_asset(asset) -> bool:
    if str(asset.filename or "").rsplit("/", 1)[-1] in THEBE_FILES:
        return True
    return asset.attributes.get("body", "").lstrip().startswith(THEBE_INLINE)


def drop_needless_scripts(app, pagename, templatename, context, doctree):
    if "script_files" not in context:
        return
    seen, kept = set(), []
    for js in context["script_files"]:
        if script_key(js) in seen or (not thebe_enabled(app) and is_thebe_asset(js)):
            continue
        seen.add(script_key(js))
        kept.append(js)
    context["script_files"] = kept
    if not thebe_enabled(app):
        context["css_files"] = [css for css in context.get("css_files", []) if not is_thebe_asset(css)]


def drop_thebe_config(app, doctree, docname):
    """Remove the raw-HTML thebe configuration sphinx-thebe appended (it runs earlier)."""
    if thebe_enabled(app):
        return
    for raw in list(doctree.findall(nodes.raw)):
        if raw.get("format") == "html" and raw.astext().lstrip().startswith(THEBE_INLINE):
            raw.parent.remove(raw)


def setup(app):
    app.connect("html-page-context", drop_needless_scripts, priority=900)
    # sphinx-thebe appends its nodes at the default priority (500); this runs after it.
    app.connect("doctree-resolved", drop_thebe_config, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
