/* Ours: copy buttons for code inside a fold (a worked solution, a diagram's source), added
   when the reader opens it, and a name for every copy button that says what it copies.
   sphinx-copybutton gives every code block its button as the page loads; _config.yml's
   copybutton_selector leaves out code inside a closed <details> (41 of the 55 blocks on 15.11),
   which takes most of that work off the page's load (runnable_book/bench/page_weight.py --lighthouse).
   This adds the same button, from copybutton's own label and icon (copybutton.js, loaded before
   this file), when a fold opens; copybutton's clipboard handler serves every `.copybtn`, so the
   new buttons copy as the others do. Each is named by its cell, as "Run in your browser" names
   cells ("Copy the code of cell 3", "Copy the output of cell 3"), with its exercise on an exercise page (the page's data,
   runnable_book/sphinx_ext/exercises.py): a screen reader heard "Copy to clipboard" fifty times. */
(() => {
  let added = 0;
  // Code cells in page order, numbered as the runner numbers them (runner.mjs).
  const cells = [...document.querySelectorAll("main div.cell")].filter((cell) => cell.querySelector(".cell_input pre"));
  const exerciseData = document.getElementById("book-exercises");
  let exercises = [];
  try {
    // Every exercise page's exercises: a cell is named by the one whose section holds it.
    exercises = exerciseData ? JSON.parse(exerciseData.textContent).pages.flatMap((page) => page.exercises) : [];
  } catch (error) { /* the runner and the progress box report malformed data */ }
  const exerciseOf = (element) => exercises.find((exercise) => {
    const section = document.getElementById(exercise.section);
    return section && section.contains(element);
  });
  const name = (button) => {
    const cell = button.closest("div.cell");
    const number = cells.indexOf(cell) + 1;
    if (!number) return;
    const exercise = exerciseOf(cell);
    const what = button.closest(".cell_output") ? "output" : "code";
    button.setAttribute("aria-label", `Copy the ${what} of cell ${number}` + (exercise ? ` (exercise ${exercise.number})` : ""));
  };
  const addCopyButtons = (fold) => {
    for (const pre of fold.querySelectorAll("div.highlight pre")) {
      const stillFolded = pre.closest("details:not([open])");
      const hasButton = pre.nextElementSibling && pre.nextElementSibling.classList.contains("copybtn");
      if (stillFolded || hasButton) continue;
      if (!pre.id) pre.id = `codecell-opened-${added++}`;
      pre.insertAdjacentHTML("afterend",
        `<button class="copybtn o-tooltip--left" data-tooltip="${messages[locale].copy}" ` +
        `data-clipboard-target="#${pre.id}">${iconCopy}</button>`);
      name(pre.nextElementSibling);
    }
  };
  document.querySelectorAll("button.copybtn").forEach(name);
  // "toggle" does not bubble; a capturing listener on the document still hears every fold.
  document.addEventListener("toggle", (event) => {
    if (event.target.open) addCopyButtons(event.target);
  }, true);
  document.querySelectorAll("details[open]").forEach(addCopyButtons);  // opened before we ran
})();
