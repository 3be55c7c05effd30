// What runnable_book/pipeline/print_pdf.py runs in the chapter's page around its two prints (ours): the
// folds opened, the contents list added and numbered, the headings the bookmarks are made of,
// the boxes too wide for paper, the page laid out anew. Read by print_pdf.py (which says when
// each runs, and why), each `export const` a function Playwright's page.evaluate calls with
// its argument. Playwright sends a function's own text, not this module: a function uses
// nothing defined outside it. (The code's shaping and 15.11's solutions have files of their own:
// print_shaping.mjs, print_solutions.mjs.)

// A chapter's PDF (runnable_book/pipeline/printed_pdfs.py) is printed from its own page: the
// one-page book's HTML (fetched from its address, as Sphinx wrote it) cut down to the chapter's
// pages, and titled for it, before any of it is laid out or runs: parsed by DOMParser, whose
// document runs no script and loads no image, so a chapter of a long book costs little more
// than its own pages. (Fetched here, not sent from Python: sending a long book's page to the
// browser took longer than its parsing.)
// Sphinx marks where each inlined page starts (a <span id="document-NAME">); a page is its
// marker and the elements after it up to the next one. The root page's own text (its title,
// edition and opening) is not a chapter's: it stays only when the root is one of the pages
// kept; else only its title's element and the edition stay (print shows the theme's own title,
// #jb-print-docs-body, which is retitled), as does every container of a page kept.
// Returns the cut page's HTML and the names of the pages kept.
/** @type {(args: [string, string[], string, boolean]) => Promise<{html: string, kept: string[]}>} */
export const chapterPage = async ([address, documents, title, withRoot]) => {
    const response = await fetch(address);
    if (!response.ok) throw new Error(`${address}: HTTP ${response.status}`);
    const page = new DOMParser().parseFromString(await response.text(), 'text/html');
    const article = /** @type {Element} */ (page.querySelector('article'));
    const marker = 'span[id^="document-"]';
    /** @type {(start: Element) => Element[]} */
    const pageAt = (start) => {
        const nodes = [start];
        for (let node = start.nextElementSibling; node && !node.matches(marker); node = node.nextElementSibling) nodes.push(node);
        return nodes;
    };
    const starts = [...article.querySelectorAll(marker)];
    const name = (/** @type {Element} */ start) => start.id.slice('document-'.length);
    const found = starts.filter((start) => documents.includes(name(start))).map(name);
    if (withRoot) {
        for (const start of starts.filter((s) => !documents.includes(name(s)))) pageAt(start).forEach((node) => node.remove());
    } else {
        const kept = new Set(starts.filter((start) => documents.includes(name(start))).flatMap(pageAt));
        // (and the edition under it: a chapter's PDF says what it was printed from, as the book's)
        for (const own of article.querySelectorAll('h1, p.book-edition')) kept.add(own);
        /** @type {(element: Element) => void} */
        const prune = (element) => {
            for (const child of [...element.children]) {
                if (kept.has(child)) continue;
                if ([...kept].some((node) => child.contains(node))) prune(child);
                else child.remove();
            }
        };
        prune(article);
    }
    const printedTitle = page.querySelector('#jb-print-docs-body > h1');
    if (printedTitle) printedTitle.textContent = title;
    // The theme's lists of the page's contents (its print-only one, and the "on this page" one
    // its script reads once the page runs) lose the entries of the sections cut.
    for (const link of page.querySelectorAll('#jb-print-toc a[href^="#"], #pst-page-toc-nav a[href^="#"]')) {
        const id = decodeURIComponent((link.getAttribute('href') || '').slice(1));
        if (id && !page.getElementById(id)) link.closest('li')?.remove();
    }
    const doctype = page.doctype ? `<!DOCTYPE ${page.doctype.name}>\n` : '';
    return {html: doctype + page.documentElement.outerHTML, kept: found};
};

// Folds (MyST-NB's hide-cell toggles and sphinx-design dropdowns) are <details>; whatever
// print_solutions.mjs did not unfold prints opened. Returns how many there are.
/** @type {() => number} */
export const openDetails = () => {
    const all = [...document.querySelectorAll('details')];
    all.forEach((details) => { details.open = true; });
    return all.length;
};

// A contents list after the chapter title and its edition: one entry per section (the <h2> of
// each inlined page), linking to it (the link works inside the PDF). It replaces the theme's print-only
// list (#jb-print-toc), which has neither links nor page numbers. Page numbers are filled in
// on a second pass (setContentsPages), once the first print has shown where each section
// starts. Styled by runnable_book/sphinx_ext/static/runnable-book.css. Returns the sections' titles.
/** @type {() => string[]} */
export const addContents = () => {
    // A heading's own text: without the "¶" link Sphinx adds to it.
    /** @type {(heading: Element) => string} */
    const headingText = (heading) => [...heading.childNodes]
        .filter((node) => !(node instanceof Element && node.classList.contains('headerlink')))
        .map((node) => node.textContent).join('');
    const article = /** @type {Element} */ (document.querySelector('article'));
    const title = /** @type {Element} */ (article.querySelector('h1'));
    // The solutions at the back of 15.11 (print_solutions.mjs) are a part of their own: listed
    // under 15.11, as the PDF's bookmarks list them.
    const sections = [...article.querySelectorAll('h2, section#print-solutions > h3')]
        .map((heading) => ({id: /** @type {Element} */ (heading.closest('section[id]')).id,
                            title: headingText(heading).trim(), sub: heading.tagName === 'H3'}));
    const nav = document.createElement('nav');
    nav.className = 'print-contents';
    nav.setAttribute('aria-label', 'Contents');
    nav.innerHTML = '<p class="print-contents-title">Contents</p><ol></ol>';
    const list = /** @type {Element} */ (nav.querySelector('ol'));
    for (const section of sections) {
        const item = document.createElement('li');
        item.innerHTML = '<a></a><span class="print-contents-page"></span>';
        if (section.sub) item.className = 'print-contents-part';
        const link = /** @type {HTMLAnchorElement} */ (item.querySelector('a'));
        link.href = '#' + section.id;
        link.textContent = section.title;
        list.append(item);
    }
    const themeContents = document.querySelector('#jb-print-toc');
    if (themeContents) {
        themeContents.replaceWith(nav);
    } else {
        title.after(nav);
    }
    // The edition (runnable_book/sphinx_ext/edition_on_pages.py puts it under the chapter's own title, which
    // print hides behind the theme's print-only one): under the printed title, above the list.
    const edition = article.querySelector('p.book-edition');
    if (edition) nav.before(edition);
    return sections.map((section) => section.title);
};

// The contents' page numbers, one per entry of addContents, in its order.
/** @type {(pages: number[]) => void} */
export const setContentsPages = (pages) => {
    document.querySelectorAll('.print-contents-page').forEach((span, index) => {
        span.textContent = String(pages[index]);
    });
};

// The headings Chromium turns into bookmarks: those shown in print, in document order, their
// white space collapsed.
/** @type {() => string[]} */
export const printedHeadings = () => {
    // A heading's own text: without the "¶" link Sphinx adds to it.
    /** @type {(heading: Element) => string} */
    const headingText = (heading) => [...heading.childNodes]
        .filter((node) => !(node instanceof Element && node.classList.contains('headerlink')))
        .map((node) => node.textContent).join('');
    return [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
        .filter((heading) => heading.getClientRects().length > 0)
        .map((heading) => headingText(heading).replace(/\s+/g, ' ').trim());
};

// Code and output boxes whose text is wider than the box: on paper that text would be cut at
// the right margin. Diagrams and images are checked by their drawing's width instead.
/** @typedef {{what: string, width: number, box: number, text: string}} Overflow */
/** @type {() => Overflow[]} */
export const overflowingBoxes = () => {
    /** @type {Overflow[]} */
    const wide = [];
    const column = /** @type {Element} */ (document.querySelector('article')).clientWidth;
    for (const pre of document.querySelectorAll('article pre:not(.mermaid)')) {
        if (pre.scrollWidth > pre.clientWidth + 1) {
            wide.push({what: 'code or output', width: pre.scrollWidth, box: pre.clientWidth,
                       text: (pre.textContent || '').trim().split('\n')[0].slice(0, 80)});
        }
    }
    for (const drawing of document.querySelectorAll('article .mermaid > svg, article img')) {
        const box = /** @type {Element} */ (drawing.parentElement).getBoundingClientRect();
        const own = drawing.getBoundingClientRect();
        if (own.right > box.right + 1 || own.width > column + 1) {
            wide.push({what: drawing.tagName.toLowerCase(), width: own.width, box: box.width,
                       text: drawing.getAttribute('aria-label') || drawing.getAttribute('alt') || ''});
        }
    }
    return wide;
};

// The whole page laid out anew: its layout tree taken down (display: none on the root) and
// built again (print_pdf.py says why, before each of its two prints).
/** @type {() => void} */
export const laidOutAfresh = () => {
    const root = document.documentElement;
    root.style.display = 'none';
    void root.offsetHeight;
    root.style.display = '';
    void root.offsetHeight;
};
