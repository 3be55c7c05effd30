"""One stylesheet per page, scripts after the first paint (runnable_book/sphinx_ext/page_assets.py),
and no thebe on a book that does not use it (runnable_book/sphinx_ext/clean_pages.py)."""

import re
from pathlib import Path

import pytest

from runnable_book.browser.page_state import wait_until
from runnable_book.sphinx_ext.page_assets import (
    THEME_SCRIPTS, THEME_STYLESHEETS, StylesheetError, bundle, rebased, sources_of, woff2_sources_only,
)

THEME_MACROS = "static/webpack-macros.html"
PAGE = "book/15_02_one_shot_rag.html"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


# -- the bundler ---------------------------------------------------------------------

@pytest.mark.parametrize("face, expected", [
    ('@font-face{font-weight:900;src:url("fa.woff2") format("woff2"),url("fa.ttf") format("truetype")}',
     '@font-face{font-weight:900;src:url("fa.woff2") format("woff2")}'),
    ("@font-face { src: url(a.woff) format('woff'), url(a.woff2?v=1) format( 'woff2' ); font-style: normal }",
     "@font-face { src:url(a.woff2?v=1) format( 'woff2' ); font-style: normal }"),
    ('@font-face{src:url("only.ttf") format("truetype")}', None),  # no woff2: left as it is
    ('.x{src:url("a.woff2") format("woff2"),url("a.ttf")}', None),  # not a font face
])
def test_a_font_face_with_a_woff2_source_keeps_only_its_woff2_sources(face, expected):
    assert woff2_sources_only(face) == (face if expected is None else expected)


@pytest.mark.parametrize("address, expected", [
    ("../vendor/fonts/a.woff2", "vendor/fonts/a.woff2"),
    ("../vendor/fonts/a.woff2?v=1#iefix", "vendor/fonts/a.woff2?v=1#iefix"),
    ("icon.svg", "styles/icon.svg"),
    ("data:image/svg+xml;charset=utf-8,%3Csvg fill='rgba(0, 0, 0, 0.25)'%3E", None),
    ("#marker", None),
    ("/absolute.png", None),
])
def test_addresses_are_rewritten_for_the_bundles_folder(address, expected):
    assert rebased(address, "_static/styles", "_static") == (address if expected is None else expected)


def test_a_bundle_keeps_the_cascade_inlines_imports_and_rewrites_each_address_once(tmp_path):
    outdir = write(tmp_path, {
        "_static/styles/theme.css": '/* theme */\n@import "../basic.css";\n.theme { color: red }\n',
        "_static/basic.css": "@charset \"utf-8\";\n.basic { background: url(file.png) }\n",
        "_static/styles/pst.css": (
            "@font-face { src: url(../vendor/fa.woff2) format('woff2') }\n"
            ".x { background: url(\"data:image/svg+xml,%3Csvg fill='rgba(0, 0, 0, 0.25)'/%3E\") }\n"
            "/*# sourceMappingURL=pst.css.map */\n"
        ),
        "_static/chapter.css": ".chapter { background: url('img/a.png') }\n",
    })
    text = bundle(outdir, ["_static/styles/theme.css", "_static/styles/pst.css", "_static/chapter.css"])
    order = [text.index(marker) for marker in (".basic", ".theme", "@font-face", ".chapter")]
    assert order == sorted(order), "imports are inlined where they stand, files kept in order"
    assert 'url("file.png")' in text, "basic.css's address, from its own folder, rewritten once"
    assert 'url("vendor/fa.woff2")' in text
    assert "rgba(0, 0, 0, 0.25)'/%3E\")" in text, "a data: address is left whole"
    assert 'url("img/a.png")' in text
    assert "@import" not in text.split("\n", 1)[1] and "@charset" not in text and "sourceMappingURL" not in text
    (outdir / "bundle.css").write_text(text, encoding="utf-8")
    assert sources_of(outdir / "bundle.css") == [
        "_static/styles/theme.css", "_static/styles/pst.css", "_static/chapter.css"], "its first line names them"


@pytest.mark.parametrize("files, message", [
    ({"_static/a.css": '@import "b.css";', "_static/b.css": '@import "a.css";'}, "@import loop"),
    ({"_static/a.css": '@import "missing.css";'}, "_static/missing.css: stylesheet not found"),
    ({"_static/a.css": '@import "b.css" print;', "_static/b.css": ""}, "does not understand"),
    ({"_static/a.css": '@import url(https://fonts.example.org/x.css);'}, "cannot be bundled"),
])
def test_a_stylesheet_it_cannot_bundle_is_an_error_naming_the_file(tmp_path, files, message):
    outdir = write(tmp_path, files)
    with pytest.raises(StylesheetError, match=re.escape(message)) as error:
        bundle(outdir, ["_static/a.css"])
    assert "_static/" in str(error.value)


def test_the_bundle_and_the_loader_list_what_the_installed_theme_links():
    import pydata_sphinx_theme

    macros = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / THEME_MACROS)
    text = macros.read_text(encoding="utf-8")

    def assets_of(macro: str) -> list[str]:
        body = text.split(f"{{% macro {macro}() %}}", 1)[1].split("{% endmacro %}", 1)[0]
        return re.findall(r"pathto\('([^']+)', 1\)", body)

    assert assets_of("head_pre_assets") == THEME_STYLESHEETS, "review THEME_STYLESHEETS"
    assert assets_of("body_post") == THEME_SCRIPTS, "review THEME_SCRIPTS"


# -- the built pages -----------------------------------------------------------------

def pages(site: Path) -> list[Path]:
    return [page for page in site.rglob("*.html") if "_static" not in page.parts]


@pytest.mark.site
def test_every_page_links_one_stylesheet_whose_addresses_exist(site):
    bundles = set()
    for page in pages(site):
        html = page.read_text(encoding="utf-8")
        if "http-equiv=\"refresh\"" in html.lower() and "stylesheet" not in html:
            continue  # the root redirect
        head = html.split("</head>", 1)[0]
        links = re.findall(r'<link rel="stylesheet"[^>]*href="([^"?]+)', head)
        assert len(links) == 1 and "/stylesheets-" in "/" + links[0], f"{page.relative_to(site)}: {links}"
        bundles.add((page.parent / links[0]).resolve())
    for stylesheet in bundles:
        assert stylesheet.is_file(), stylesheet
        text = stylesheet.read_text(encoding="utf-8")
        # Made from the sources as the build left them (pygments.css is rewritten late).
        assert text == bundle(site, sources_of(stylesheet)), f"{stylesheet.name} is stale"
        for address in re.findall(r'url\("([^"]+)"\)', text):
            if not address.startswith(("data:", "#")):
                target = (stylesheet.parent / re.split(r"[?#]", address)[0]).resolve()
                assert target.is_file(), f"{stylesheet.name}: url({address}) -> no such file"


@pytest.mark.site
def test_the_inline_documentation_options_are_the_file_sphinx_writes(site):
    written = (site / "_static" / "documentation_options.js").read_text(encoding="utf-8").strip()
    html = (site / PAGE).read_text(encoding="utf-8")
    assert f"<script>{written}</script>" in html
    assert "documentation_options.js" not in html


@pytest.mark.site
def test_no_page_carries_thebe_or_a_cdn_address(site):
    for page in pages(site):
        html = page.read_text(encoding="utf-8")
        for word in ("thebe", "unpkg.com", "binder-examples"):
            assert word not in html, f"{page.relative_to(site)} mentions {word}"


@pytest.mark.site
def test_scripts_run_after_the_first_paint_and_the_theme_is_set_before(browser_on_site):
    from runnable_book.browser.chromium import VIEWPORT, wait_for_page_scripts

    served, browser = browser_on_site
    # (No service worker: the book's would answer the second page's scripts from its cache,
    # past the route that stops copybutton.js.)
    context = browser.new_context(viewport=VIEWPORT, color_scheme="dark", service_workers="block")
    context.add_init_script("""document.addEventListener("DOMContentLoaded", () => {
        window.atContentLoaded = {theme: document.documentElement.dataset.theme,
                                  bootstrap: typeof window.bootstrap,
                                  copyButtons: document.querySelectorAll("button.copybtn").length};
    });""")
    page = context.new_page()
    page.goto(served.url(PAGE), wait_until="load")
    assert wait_for_page_scripts(page) == "loaded"
    before = page.evaluate("() => window.atContentLoaded")
    assert before == {"theme": "dark", "bootstrap": "undefined", "copyButtons": 0}, before
    after = page.evaluate("""() => ({theme: document.documentElement.dataset.theme,
                                     bootstrap: typeof window.bootstrap,
                                     copyButtons: document.querySelectorAll("button.copybtn").length})""")
    assert after["theme"] == "dark" and after["bootstrap"] == "object" and after["copyButtons"] > 0, after

    # A script that does not arrive is reported, not waited for forever.
    broken = context.new_page()
    broken.route(re.compile(r".*/copybutton\.js.*"), lambda route: route.abort())
    errors = []
    broken.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    broken.goto(served.url(PAGE), wait_until="load")
    assert wait_for_page_scripts(broken) == "failed"
    assert any("copybutton.js" in error for error in errors), errors


@pytest.mark.site
def test_code_in_a_fold_gets_its_copy_button_when_the_fold_opens(open_page):
    page = open_page("book/15_11_exercises.html")
    count = "() => document.querySelectorAll('button.copybtn').length"
    folded = "() => document.querySelectorAll('details:not([open]) div.highlight pre').length"
    before, code_in_folds = page.evaluate(count), page.evaluate(folded)
    assert before > 0 and code_in_folds > 0
    assert page.locator("details:not([open]) button.copybtn").count() == 0, "no buttons in closed folds at load"
    solution = page.locator("details.hide").filter(has=page.locator("div.highlight pre")).first
    solution.locator("summary").click()
    wait_until(page, f"() => ({count})() > {before}")
    buttons = page.evaluate("""() => [...document.querySelectorAll('details[open] button.copybtn')].map(b => ({
        target: b.dataset.clipboardTarget, follows: b.previousElementSibling.id,
        html: b.outerHTML.replace(/data-clipboard-target="[^"]*"/, '').replace(/ aria-label="[^"]*"/, '')
            .replace(/\\s+/g, ' ').replace(/> </g, '><')}))""")
    # (each names its own cell: tests/test_phone_and_screen_reader.py)
    first_at_load = page.evaluate("""() => document.querySelector('button.copybtn').outerHTML
        .replace(/data-clipboard-target="[^"]*"/, '').replace(/ aria-label="[^"]*"/, '')
        .replace(/\\s+/g, ' ').replace(/> </g, '><')""")
    assert buttons and all(b["target"] == "#" + b["follows"] for b in buttons), buttons
    assert all(b["html"] == first_at_load for b in buttons), (buttons[0]["html"], first_at_load)
    ids = page.evaluate("() => [...document.querySelectorAll('pre[id]')].map(pre => pre.id)")
    assert len(ids) == len(set(ids)), "every copy target is one element"
    # copybutton's own handler serves it: the tooltip says it copied.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    button = solution.locator("button.copybtn").first
    button.hover()
    button.click()
    wait_until(page, "(b) => b.getAttribute('data-tooltip') === 'Copied!'", arg=button.element_handle())


@pytest.mark.site
def test_every_page_links_the_stylesheet_bundle_at_its_current_version(site):
    """The bundle's ?v= is its own digest on every page, fresh builds included, so a reader's
    browser never keeps a stale stylesheet after the book's CSS changes."""
    import hashlib
    import re

    from runnable_book.browser.local_site import find_pages

    links = 0
    for page in find_pages(site):
        text = (site / page).read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"]*stylesheets-[0-9a-f]{8}\.css[^"]*)"', text):
            links += 1
            path, _, version = href.partition("?v=")
            bundle = (site / page).parent / path
            assert version == hashlib.sha256(bundle.resolve().read_bytes()).hexdigest()[:8], f"{page}: {href}"
    assert links >= 10
