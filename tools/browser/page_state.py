"""What a built page has drawn and loaded, asked of the page in the browser, and how long
to wait for it: one definition for every tool that opens the book's pages (the site check,
tools/checks/site_check.py; the PDF's printer, tools/pipeline/print_pdf.py; axe,
tools/checks/axe_check.py; the JupyterLab test, tests/test_binder.py; the browser tests).
"""

NAVIGATION_TIMEOUT_MS = 30_000
# The limit on drawing a page's mermaid diagrams, whoever draws them (the HTML's
# sphinxcontrib-mermaid, JupyterLab's renderer): a limit, not a wait (each waits for the drawing).
MERMAID_TIMEOUT_MS = 30_000
IMAGES_TIMEOUT_MS = 10_000
# Text that mermaid draws instead of a diagram when the source does not parse.
MERMAID_ERROR_PATTERN = "Syntax error in text|Parse error"

# Mermaid draws each block in a temporary <div> inside it and, once done,
# replaces the block's content with the finished <svg>; when the source does
# not parse, its error diagram stays in that <div>. So a block is drawn when
# an <svg> is its direct child, and failed when it shows the error text.
# sphinxcontrib-mermaid defers blocks hidden in closed tabs or dropdowns until
# they are shown (marked data-mermaid-deferred): those cannot be drawn yet.
JS_MERMAID_STATUS = """(pattern) => {
    const error = new RegExp(pattern);
    const blocks = [...document.querySelectorAll('.mermaid')].map((el) => ({
        deferred: el.hasAttribute('data-mermaid-deferred'),
        drawn: !!el.querySelector(':scope > svg'),
        failed: !!el.querySelector('svg') && error.test(el.textContent),
        named: !!(el.getAttribute('aria-label') || '').trim(),
    }));
    const strayErrors = [...document.querySelectorAll('svg')]
        .filter((svg) => !svg.closest('.mermaid') && error.test(svg.textContent)).length;
    return {blocks, strayErrors};
}"""

JS_MERMAID_SETTLED = f"""(pattern) => ({JS_MERMAID_STATUS})(pattern).blocks
    .every((block) => block.deferred || block.drawn || block.failed)"""

# Lazy images load only when scrolled into view; load them now so that
# "broken" means broken, not "not scrolled to yet". Bounded, because evaluate()
# itself has no timeout.
JS_LOAD_ALL_IMAGES = """async (timeoutMs) => {
    const images = [...document.images];
    images.forEach((img) => { img.loading = 'eager'; });
    const loaded = Promise.all(images.map((img) => img.complete ? null :
        new Promise((done) => { img.addEventListener('load', done); img.addEventListener('error', done); })));
    await Promise.race([loaded, new Promise((done) => setTimeout(done, timeoutMs))]);
}"""

JS_IMAGES = """() => [...document.images].map((img) => ({
    src: img.getAttribute('src') || '',
    broken: !(img.complete && img.naturalWidth > 0),
    alt: (img.getAttribute('alt') || '').trim(),
}))"""


# Painted and still, polled once a frame: no finite animation or CSS transition running
# (document.getAnimations() flushes styles first, so a theme just switched has started its
# transitions; spinners run forever and are not waited for), and the scroll position the
# same as at the previous frame. What colour contrast is judged on, what a screenshot shows.
JS_STILL = """() => {
    const moving = document.getAnimations().some((a) => a.playState === 'running'
        && a.effect && a.effect.getComputedTiming().iterations !== Infinity);
    const same = window.lastScrollY === scrollY;
    window.lastScrollY = scrollY;
    return !moving && same;
}"""
STILL_TIMEOUT_MS = 10_000


def wait_until_still(page) -> None:
    """After a change of theme, size or focus: wait until the page is painted and still
    (polled once a frame: JS_STILL compares a frame with the one before)."""
    page.evaluate("() => { window.lastScrollY = undefined; }")
    page.wait_for_function(JS_STILL, timeout=STILL_TIMEOUT_MS, polling="raf")


# Playwright's wait_for_function polls its predicate once an animation frame unless told
# otherwise ("raf"): the page then makes 60 frames a second for as long as a test waits, about
# a tenth of a core spent on waiting, beside the Python the test waits for (`make
# bench-browsers`: a 3-s cell waited for each way). The tests and tools wait for Python, cells,
# workers and drawings for minutes in all, on two cores, so they poll every POLL_MS instead: a
# wait ends at most that much later.
POLL_MS = 50


def wait_until(page, predicate: str, *, arg=None, timeout: float | None = None):
    """``page.wait_for_function(predicate, arg=arg, timeout=timeout)``, polled every POLL_MS
    instead of every frame (page: a Playwright page or frame). Returns its handle."""
    return page.wait_for_function(predicate, arg=arg, timeout=timeout, polling=POLL_MS)
