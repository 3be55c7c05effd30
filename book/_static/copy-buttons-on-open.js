/* Ours: copy buttons for code inside a fold (a worked solution, a diagram's source), added
   when the reader opens it. sphinx-copybutton gives every code block its button as the
   page loads; _config.yml's copybutton_selector leaves out code inside a closed <details>
   (41 of the 55 blocks on 15.11), which takes most of that work off the page's load
   (tools/bench/page_weight.py --lighthouse). This adds the same button, from copybutton's own
   label and icon (copybutton.js, loaded before this file), when a fold opens; copybutton's
   clipboard handler serves every `.copybtn`, so the new buttons copy as the others do. */
(() => {
  let added = 0;
  const addCopyButtons = (fold) => {
    for (const pre of fold.querySelectorAll("div.highlight pre")) {
      const stillFolded = pre.closest("details:not([open])");
      const hasButton = pre.nextElementSibling && pre.nextElementSibling.classList.contains("copybtn");
      if (stillFolded || hasButton) continue;
      if (!pre.id) pre.id = `codecell-opened-${added++}`;
      pre.insertAdjacentHTML("afterend",
        `<button class="copybtn o-tooltip--left" data-tooltip="${messages[locale].copy}" ` +
        `data-clipboard-target="#${pre.id}">${iconCopy}</button>`);
    }
  };
  // "toggle" does not bubble; a capturing listener on the document still hears every fold.
  document.addEventListener("toggle", (event) => {
    if (event.target.open) addCopyButtons(event.target);
  }, true);
  document.querySelectorAll("details[open]").forEach(addCopyButtons);  // opened before we ran
})();
