// Small DOM helpers the runner's modules share (ours).

// el("button", {class: "x", onclick: f}, "text", child): an element, its attributes, its
// event listeners (on...) and children, in one expression.
/** @param {string} tag @param {Record<string, any>} [attrs] @param {(Node | string)[]} children @returns {HTMLElement} */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}

// A button styled as the theme's small buttons.
/** @param {string} text @param {(event: Event) => void} onclick @param {{cls?: string, label?: string}} [options] */
export function button(text, onclick, { cls = "", label } = {}) {
  return el("button", { type: "button", class: `btn btn-sm browser-run-button ${cls}`.trim(), onclick,
    "aria-label": label }, text);
}

// Offer text as a file the browser saves (no server involved).
/** @param {string} name @param {string} text @param {string} [type] */
export function saveFile(name, text, type = "text/plain") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
