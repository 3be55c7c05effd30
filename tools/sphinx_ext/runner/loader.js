/* "Run in your browser": the loader every page with code cells carries inline (ours;
   tools/sphinx_ext/runner/__init__.py adds it). It only draws the controls; Python, the editor
   and runner.mjs load when the reader clicks. The controls' style is in
   book/_static/chapter.css: a <style> added here made the browser restyle the whole page
   at load (about 100 ms at a phone's speed, Lighthouse's TBT). */
(() => {
  const LABEL = "Run in your browser";
  const SERVE_HINT = "Running needs the book served over http, not opened as a file: in the " +
    "book's folder run `python -m http.server -d _build/html`, then open http://localhost:8000/.";
  let status, bar, loading;
  function button(cls, text) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "btn btn-sm browser-run-start " + cls;
    b.textContent = text;
    b.addEventListener("click", start);
    return b;
  }
  function start() {
    if (location.protocol === "file:") {
      status.textContent = SERVE_HINT;
      bar.scrollIntoView({ block: "center" });
      return;
    }
    bar.scrollIntoView({ block: "start" });
    if (loading) return;
    status.textContent = "Loading the editor and Python…";
    const root = document.documentElement.dataset.content_root || "";
    loading = import(new URL(root + "_static/runner/runner.mjs", location.href).href)
      .then((runner) => runner.start({ bar, status }))
      .catch((error) => { loading = null; status.textContent = "Could not load the runner: " + error.message; });
  }
  document.addEventListener("DOMContentLoaded", () => {
    const first = document.querySelector("main div.cell");
    if (!first) return;
    status = document.createElement("span");
    status.className = "browser-run-status";
    status.setAttribute("role", "status");  /* an aria-live region: loading steps are announced */
    bar = document.createElement("div");
    bar.className = "browser-run-bar";
    status.textContent = "Edit and run this page's code here: Python runs in your browser " +
      "(the first click downloads about 14 MB, cached afterwards).";
    bar.append(button("browser-run-at-cell", "▶ " + LABEL), status);
    first.before(bar);
    const header = document.querySelector(".article-header-buttons");
    if (header) header.prepend(button("browser-run-in-header", "▶ Run"));
    const headerButton = header && header.querySelector(".browser-run-in-header");
    if (headerButton) headerButton.setAttribute("aria-label", LABEL);
  });
})();
