// What runnable_book/pipeline/print_pdf.py runs in 15.11's page before printing: the worked solutions
// moved to the back (ours): read by print_solutions.py (which says what and why), each
// `export const` a function Playwright's page.evaluate calls with its argument.

// [pageTargets, described]: the attribute (print_solutions.py's PAGE_TARGETS) whose element's
// text is the page number of the element with that id, and the exercises as
// runnable_book/pipeline/book_shape.py describes them, [{number, section}] in page order (section: its
// section's id). Returns the ids whose page numbers the second print fills in. Throws when
// 15.11 is not laid out as expected (an exercise's section missing, or without hints or a
// solution), rather than print it half moved.
// Types (tsc, tsconfig.page.json): where a query's answer is sure by the page's layout (15.11's
// exercises, as the check above says), a cast says so; if it is not, the page throws, as before.
/** @type {(argument: [string, {number: number, section: string}[]]) => string[]} */
export const solutionsAtTheBack = ([pageTargets, described]) => {
    if (!described.length) return [];
    const exercises = described.map(({ number, section }) => {
        const element = document.getElementById(section);
        if (!element || !element.matches('section')) throw new Error(`exercise ${number}: no section #${section} on the page`);
        return { number, element };
    });
    /** @type {(element: Element) => string} */
    const labelOf = (element) => {
        const summary = element.matches('details') ? element.querySelector(':scope > summary')
            : element.querySelector('details > summary');
        const collapsed = summary && (summary.querySelector('.collapsed') || summary);
        return collapsed ? collapsed.textContent.trim() : '';
    };
    const pageOf = (/** @type {string} */ id) => `<span ${pageTargets}="${id}">00</span>`;
    /** @type {(dropdown: Element) => ChildNode[]} */
    const contentOf = (dropdown) => [.../** @type {Element} */ (dropdown.querySelector(':scope > .sd-summary-content')).childNodes]
        .filter((node) => !(/** @type {Partial<Element>} */ (node).matches && /** @type {Element} */ (node).matches('details.sd-dropdown')));
    const solutions = document.createElement('section');
    solutions.id = 'print-solutions';
    solutions.className = 'print-solutions';
    solutions.innerHTML = '<h3>Solutions to the exercises</h3><p>On the web page and in the '
        + 'notebooks, each worked solution follows its exercise, folded until it is opened; '
        + `here they follow all ${exercises.length} exercises.</p>`;
    const targets = [];
    for (const { number, element: exercise } of exercises) {
        const parts = [...exercise.children];
        const worked = parts.filter((part) => new RegExp(`^Worked solution ${number}\\b`).test(labelOf(part)));
        const firstHint = parts.find((part) => part.matches('details.sd-dropdown') && /^Hint 1 of/.test(labelOf(part)));
        if (!worked.length || !firstHint) throw new Error(`exercise ${number}: no hints or no worked solution found`);
        // Hints: each dropdown holds the next; printed flat, one after another.
        const hints = document.createElement('div');
        hints.className = 'print-hints';
        for (let dropdown = /** @type {Element | null} */ (firstHint), index = 1; dropdown; index += 1) {
            const hint = document.createElement('div');
            hint.className = 'print-hint';
            hint.innerHTML = `<p class="print-hint-title">Hint ${index}</p>`;
            const next = dropdown.querySelector(':scope > .sd-summary-content > details.sd-dropdown');
            hint.append(...contentOf(dropdown));
            hints.append(hint);
            dropdown = next;
        }
        firstHint.replaceWith(hints);
        const pointer = document.createElement('p');
        pointer.className = 'print-solution-pointer';
        pointer.innerHTML = `<a href="#print-solution-${number}">Solution: p.&nbsp;${pageOf(`print-solution-${number}`)}</a>`;
        hints.after(pointer);
        // The worked solution, unfolded and without its fold labels, at the back.
        const solution = document.createElement('section');
        solution.id = `print-solution-${number}`;
        solution.innerHTML = `<h4>Solution ${number} <a href="#${exercise.id}">(exercise ${number}, `
            + `p.&nbsp;${pageOf(exercise.id)})</a></h4>`;
        for (const part of worked) {
            for (const details of part.matches('details') ? [part] : part.querySelectorAll('details')) {
                const unfolded = document.createElement('div');
                unfolded.className = 'print-unfolded';
                unfolded.append(...(details.matches('.sd-dropdown') ? contentOf(details)
                    : [...details.childNodes].filter((node) => node.nodeName !== 'SUMMARY')));
                details.replaceWith(unfolded);
                if (details === part) solution.append(unfolded);
            }
            if (!part.matches('details')) solution.append(part);
        }
        solutions.append(solution);
        targets.push(exercise.id, solution.id);
    }
    /** @type {{number: number, element: Element}} */ (exercises.at(-1)).element.after(solutions);
    // 15.11's introduction tells how the screen shows hints and solutions; in print it tells
    // where they are. Its two sentences about the screen are found as the page writes them.
    const screen = 'Hints come next, one at a time: each hint holds the next one. '
        + 'Then comes a worked solution, hidden on this page until you open it.';
    const walker = document.createTreeWalker(document.querySelector('article') || document.body, NodeFilter.SHOW_TEXT);
    /** @type {Text | null} */
    let intro = null;
    for (let node = walker.nextNode(); node && !intro; node = walker.nextNode()) {
        const textNode = /** @type {Text} */ (node);  // (SHOW_TEXT: text nodes only)
        if (textNode.data.replace(/\s+/g, ' ').includes(screen)) intro = textNode;
    }
    if (!intro) throw new Error(`15.11's introduction no longer says "${screen}": `
        + 'say how it reads in print in runnable_book/pipeline/print_solutions.py');
    const text = intro.data.replace(/\s+/g, ' ');
    const at = text.indexOf(screen);
    const printed = document.createElement('span');
    printed.className = 'print-intro';
    printed.innerHTML = 'Its hints follow it, in order. Its worked solution is printed with the others after '
        + `the last exercise, under “Solutions to the exercises” (<a href="#${solutions.id}">p.&nbsp;`
        + `${pageOf(solutions.id)}</a>), and the exercise ends with a line giving its page.`;
    intro.replaceWith(document.createTextNode(text.slice(0, at)), printed,
                      document.createTextNode(text.slice(at + screen.length)));
    targets.push(solutions.id);
    return targets;
};

// [pageTargets, pages]: each page-number element's text, from {id: page}.
/** @type {(args: [string, Record<string, number>]) => void} */
export const setPages = ([pageTargets, pages]) => {
    document.querySelectorAll(`[${pageTargets}]`).forEach((span) => {
        span.textContent = String(pages[/** @type {string} */ (span.getAttribute(pageTargets))]);  // (the selector's attribute)
    });
};
