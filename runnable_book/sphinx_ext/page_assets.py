"""Sphinx extension: a page's stylesheets as one file, and its scripts after its first paint.

Why: on a phone over a slow network (Lighthouse's mobile profile) a page of this book linked
eleven stylesheets (one of them ``@import``-ing a twelfth, so a second round trip before
anything could paint) and nine scripts in ``<head>``. The scripts' work then landed right
after the first paint in long tasks: the theme's ``bootstrap.js`` and
``pydata-sphinx-theme.js`` measure the page (forcing the whole first layout inside a script),
copybutton adds a button to every code block. `make bench-pages` (Lighthouse) measures
the effect.

1. **One stylesheet.** The theme's two stylesheets (pydata-sphinx-theme's
   ``head_pre_assets()``), then the page's ``css_files`` in their order, are concatenated
   into ``_static/stylesheets-<names digest>.css``: ``@import`` is inlined where it stands and
   every relative ``url()`` is rewritten for the new folder, so the cascade and the fonts and
   images are exactly those of the separate files. A stylesheet with attributes of its own
   (``media``, ``title``) is linked after the bundle, unchanged. The bundle is written when
   the build finishes, after pydata-sphinx-theme rewrites ``pygments.css`` (its own
   ``build-finished`` step), and every bundle in the build is rewritten each time from the
   sources its first line names, so an edit to ``runnable-book.css`` alone reaches every page.
   The link's ``?v=`` is a digest of the bundle (it changes when the bundle does, as
   Sphinx's own ``?v=`` does for its files), so a reader's browser never keeps a stale
   stylesheet. It can only be known once the bundle is written, after every page: so the
   pages link the bundle without one, and when the build finishes every page of the site
   gets the bundle's current ``?v=`` (pages an incremental build did not rewrite included).
   An ``@font-face`` that offers a woff2 source keeps only its woff2 sources: every browser
   that runs the book's scripts (module scripts, service workers) reads woff2 and never
   fetches the fallbacks, but the offline copy keeps what the pages' files name
   (runnable_book/sphinx_ext/offline.py), and the theme's TrueType icon fonts named beside the woff2
   subsets (icons.py) were 0.7 MB of a first visit's 1.3 MB.
2. **Scripts after the first paint.** Inline configuration scripts stay where they are (they
   cost no request); ``documentation_options.js`` becomes one of them (its 300 bytes inline,
   as the two inline scripts after it need it), rendered from Sphinx's own template. Every other script, the theme's two
   included, is loaded in its original order by runnable_book/sphinx_ext/templates/scripts-after-paint.html
   once the whole page has painted. When the last one has run, ``<html>`` gets
   ``data-page-scripts="loaded"`` (tests wait for that; runnable_book/checks/site_check.py
   ``wait_for_page_scripts``).
   sphinx-design's ``design-tabs.js`` only listens for DOMContentLoaded, so loaded later it
   would never start: it is left out of pages without tabs (where it does nothing) and
   loaded ``defer`` as before on a page with tabs.
   Sphinx's search page is left as it is: its search scripts run on DOMContentLoaded too.

The theme-mode script in runnable_book/sphinx_ext/templates/layout.html belongs with this: it sets
``data-theme`` to the colour the theme's script will choose, so that script no longer
restyles the whole page when it runs.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from pathlib import Path

import sphinx
from sphinx.errors import ExtensionError

from runnable_book.common.files import write_atomically
from runnable_book.sphinx_ext.stamped_pages import pages_to_stamp

# What pydata-sphinx-theme 0.17's webpack macros link (tests/test_page_assets.py checks
# these against the installed theme's static/webpack-macros.html).
THEME_STYLESHEETS = ["_static/styles/theme.css", "_static/styles/pydata-sphinx-theme.css"]
THEME_SCRIPTS = ["_static/scripts/bootstrap.js", "_static/scripts/pydata-sphinx-theme.js"]
DOCUMENTATION_OPTIONS = "_static/documentation_options.js"
# Sphinx renders that file from this template with the page's context; so do we, as the
# singlehtml builder writes its page before it copies its static files.
DOCUMENTATION_OPTIONS_TEMPLATE = Path(sphinx.__file__).parent / "themes" / "basic" / "static" / "documentation_options.js.jinja"
TABS_SCRIPT = "_static/design-tabs.js"
PAGES_LEFT_ALONE = {"search"}
BUNDLE_FOLDER = "_static"
PLAIN_STYLESHEET = {"rel": "stylesheet", "type": "text/css"}

# `@import "x.css";` or `@import url(x.css);`, nothing after the address (no media list).
IMPORT = r"""@import\s+(?:url\(\s*)?(["']?)(?P<import>[^"')\s;]+)\1\s*\)?\s*;"""
URL = r"""url\(\s*(?:"(?P<double>[^"]*)"|'(?P<single>[^']*)'|(?P<bare>[^"')\s]+))\s*\)"""
IMPORT_OR_URL = re.compile(f"{IMPORT}|{URL}")
SOURCE_MAP = re.compile(r"/\*#\s*sourceMappingURL=[^*]*\*/")
CHARSET = re.compile(r"""@charset\s+["'][^"']*["']\s*;""")
NOT_A_PATH = ("data:", "#", "/", "http:", "https:")
FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}")
FONT_SOURCES = re.compile(r"(\bsrc\s*:)([^;}]*)")
WOFF2 = re.compile(r"""format\(\s*["']?woff2["']?\s*\)""")


class StylesheetError(ExtensionError):
    pass


def rebased(address: str, from_folder: str, to_folder: str) -> str:
    """``address`` as written in a stylesheet in ``from_folder``, seen from ``to_folder``."""
    if address.startswith(NOT_A_PATH):
        return address
    path, suffix = re.fullmatch(r"([^?#]*)(.*)", address, re.S).groups()  # keep ?query and #fragment
    target = posixpath.normpath(posixpath.join(from_folder, path))
    return posixpath.relpath(target, to_folder) + suffix


def stylesheet_text(outdir: Path, name: str, to_folder: str, seen: tuple[str, ...] = ()) -> str:
    """The stylesheet ``name`` (relative to ``outdir``) with its imports inlined and its
    addresses rewritten for a stylesheet in ``to_folder``."""
    if name in seen:
        raise StylesheetError(f"{name}: @import loop through {' -> '.join(seen)}")
    file = outdir / name
    if not file.is_file():
        raise StylesheetError(f"{name}: stylesheet not found in {outdir}")
    text = file.read_text(encoding="utf-8")
    folder = posixpath.dirname(name)

    def inline_or_rebase(match: re.Match) -> str:
        # One pass over the text, so an inlined stylesheet's addresses (already rewritten
        # from its own folder) are not rewritten a second time from this one's.
        if match.group("import") is not None:
            address = match.group("import")
            if address.startswith(NOT_A_PATH):
                raise StylesheetError(f"{name}: @import of {address} cannot be bundled")
            imported = posixpath.normpath(posixpath.join(folder, address))
            return stylesheet_text(outdir, imported, to_folder, seen + (name,))
        address = next(group for group in match.group("double", "single", "bare") if group is not None)
        return f'url("{rebased(address, folder, to_folder)}")'

    text = IMPORT_OR_URL.sub(inline_or_rebase, SOURCE_MAP.sub("", CHARSET.sub("", text)))
    if "@import" in text:
        raise StylesheetError(f"{name}: an @import this bundler does not understand (a media list?)")
    return text


def top_level_items(text: str) -> list[str]:
    """``text`` split at the commas that stand outside parentheses (a list of CSS values)."""
    items, depth, start = [], 0, 0
    for index, character in enumerate(text):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if character == "," and depth == 0:
            items.append(text[start:index])
            start = index + 1
    return items + [text[start:]]


def woff2_sources_only(css: str) -> str:
    """Each ``@font-face`` that offers a woff2 source keeps only those (see the docstring)."""
    def sources(match: re.Match) -> str:
        kept = [item.strip() for item in top_level_items(match.group(2)) if WOFF2.search(item)]
        return match.group(1) + ",".join(kept) if kept else match.group(0)

    return FONT_FACE.sub(lambda face: FONT_SOURCES.sub(sources, face.group(0)), css)


HEADER = "/* Generated by runnable_book/sphinx_ext/page_assets.py; do not edit. Sources, in order: {} */\n"


def bundle(outdir: Path, names: list[str], to_folder: str = BUNDLE_FOLDER) -> str:
    parts = [f"/* {name} */\n{woff2_sources_only(stylesheet_text(outdir, name, to_folder))}" for name in names]
    return HEADER.format(" ".join(names)) + "\n".join(parts) + "\n"


def sources_of(bundle_file: Path) -> list[str]:
    first_line = bundle_file.read_text(encoding="utf-8").split("\n", 1)[0] + "\n"
    prefix, suffix = HEADER.split("{}")
    if not (first_line.startswith(prefix) and first_line.endswith(suffix)):
        raise StylesheetError(f"{bundle_file}: not a bundle this extension wrote (first line changed?)")
    return first_line[len(prefix):-len(suffix)].split()


def digest(text: str | bytes, length: int = 8) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:length]


def write_if_changed(path: Path, text: str) -> None:
    """An unchanged file is not rewritten (it keeps its date for what an incremental build compares)."""
    if not (path.is_file() and path.read_text(encoding="utf-8") == text):
        write_atomically(path, text)


def bundle_stylesheets(app, context) -> None:
    bundled = list(THEME_STYLESHEETS)
    others = []
    for css in context.get("css_files", []):
        name = os.fspath(css.filename)
        if "://" not in name and css.attributes == PLAIN_STYLESHEET:
            bundled.append(name)
        else:
            others.append(css)
    names = "\n".join(bundled)
    bundle_name = f"{BUNDLE_FOLDER}/stylesheets-{digest(names)}.css"
    app.builder._page_assets_bundles.setdefault(bundle_name, bundled)  # bundle -> its sources
    # Versioned when the build finishes (version_links): the bundle is not written yet.
    context["stylesheet_bundle"] = context["pathto"](bundle_name, resource=True)
    context["css_files"] = others


def write_bundles(app, exception) -> None:
    """The bundles the pages of this build link, and any an earlier build left, from their
    sources as they finally are (see the docstring)."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for bundle_name, names in app.builder._page_assets_bundles.items():
        write_if_changed(outdir / bundle_name, bundle(outdir, names))  # names the file it cannot bundle
    for bundle_file in sorted((outdir / BUNDLE_FOLDER).glob("stylesheets-*.css")):
        if f"{BUNDLE_FOLDER}/{bundle_file.name}" in app.builder._page_assets_bundles:
            continue
        names = sources_of(bundle_file)
        if all((outdir / name).is_file() for name in names):
            write_if_changed(bundle_file, bundle(outdir, names))  # pages an incremental build kept
        else:
            bundle_file.unlink()  # left by an earlier build whose stylesheets no longer exist
    version_links(app, outdir)


# A page's link to a bundle, with or without its version: href="…stylesheets-1a2b3c4d.css?v=…".
BUNDLE_LINK = re.compile(r'(href="[^"]*?stylesheets-([0-9a-f]{8})\.css)(?:\?v=[0-9a-f]+)?"')


def version_links(app, outdir: Path) -> None:
    """Give every page's bundle link the digest of the bundle as it now is (the pages Sphinx
    wrote, when the others have it already: stamped_pages.py)."""
    versions = {f.stem.removeprefix("stylesheets-"): digest(f.read_bytes())
                for f in (outdir / BUNDLE_FOLDER).glob("stylesheets-*.css")}

    def every_page():  # (not _static/ and the like: they hold templates, not pages)
        return (page for page in outdir.rglob("*.html")
                if not any(part.startswith("_") for part in page.relative_to(outdir).parts[:-1]))

    for page in pages_to_stamp(app, "stylesheet bundles' versions", versions, every_page):
        text = page.read_text(encoding="utf-8")
        versioned = BUNDLE_LINK.sub(
            lambda m: f'{m.group(1)}?v={versions[m.group(2)]}"' if m.group(2) in versions else m.group(0), text)
        write_if_changed(page, versioned)


def documentation_options(app, context) -> str:
    """The body of ``documentation_options.js`` as Sphinx writes it into ``_static``."""
    template = DOCUMENTATION_OPTIONS_TEMPLATE.read_text(encoding="utf-8")
    return app.builder.templates.render_string(template, context).strip()


def script_address(app, context, name: str) -> str:
    file = Path(app.outdir) / name
    version = f"?v={digest(file.read_bytes())}" if file.is_file() else ""
    return context["pathto"](name, resource=True) + version


def scripts_after_first_paint(app, pagename, context) -> None:
    from sphinx.builders.html._assets import _JavaScript

    page_has_tabs = "sd-tab-label" in context.get("body", "")
    kept, later = [], []
    for js in context.get("script_files", []):
        name = os.fspath(js.filename or "")
        attributes = {key: value for key, value in js.attributes.items()
                      if key not in {"body", "defer", "async"} and value is not None}
        if not name or "://" in name:
            kept.append(js)
        elif name == DOCUMENTATION_OPTIONS:
            kept.append(_JavaScript(None, priority=js.priority, body=documentation_options(app, context)))
        elif name == TABS_SCRIPT:
            if page_has_tabs:
                kept.append(_JavaScript(name, priority=js.priority, defer="defer", **attributes))
        else:
            later.append({"src": script_address(app, context, name), "attributes": attributes})
    later += [{"src": script_address(app, context, name), "attributes": {}} for name in THEME_SCRIPTS]
    context["script_files"] = kept
    context["scripts_after_paint"] = later


def page_assets(app, pagename, templatename, context, doctree) -> None:
    if app.builder.format != "html" or "css_files" not in context:
        return
    bundle_stylesheets(app, context)
    if pagename not in PAGES_LEFT_ALONE:
        scripts_after_first_paint(app, pagename, context)


def start_build(app) -> None:
    app.builder._page_assets_bundles = {}


def setup(app):
    app.connect("builder-inited", start_build)
    # After runnable_book/sphinx_ext/clean_pages.py (priority 900), which drops thebe's assets.
    app.connect("html-page-context", page_assets, priority=950)
    # After pydata-sphinx-theme's pygments.css (default priority 500).
    app.connect("build-finished", write_bundles, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
