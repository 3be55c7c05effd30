// input() in the page, when it is cross-origin isolated (the book's service worker sends
// COOP/COEP): the worker's Python waits (Atomics.wait) on a SharedArrayBuffer while the cell
// shows a field under its output; Enter writes what the reader typed into the buffer and wakes
// it. Without isolation there is no shared memory, and input() keeps its clear message
// (page_python.py). The buffer: [0] 0 waiting, 1 answered; [1] the answer's UTF-8 length;
// the bytes from byte 8.
import { el } from "./dom.mjs";

export const INPUT_BYTES = 64 * 1024;

export function inputBuffer() {
  return new SharedArrayBuffer(8 + INPUT_BYTES);
}

/** @param {SharedArrayBuffer} buffer @param {string} text */
function answer(buffer, text) {
  const bytes = new TextEncoder().encode(text).slice(0, INPUT_BYTES);
  new Uint8Array(buffer, 8, bytes.length).set(bytes);
  const flag = new Int32Array(buffer, 0, 2);
  flag[1] = bytes.length;
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

// The field for one input() call, under the cell's output, focused; gone once answered.
/** @param {import("./cells.mjs").Cell} cell @param {string} prompt @param {SharedArrayBuffer} buffer */
export function askForInput(cell, prompt, buffer) {
  dropInputFields(cell);
  const field = /** @type {HTMLInputElement} */ (el("input", { type: "text", class: "browser-run-input-field", "aria-label": prompt.trim() || "input()" }));
  const form = el("form", { class: "browser-run-input" }, el("span", { class: "browser-run-input-prompt" }, prompt), field);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    form.remove();
    answer(buffer, field.value);
  });
  /** @type {HTMLElement} */ (cell.element.querySelector(".browser-run-output")).after(form);  // (cells.mjs made it)
  field.focus();
}

/** @param {import("./cells.mjs").Cell} cell */
export function dropInputFields(cell) {
  for (const form of cell.element.querySelectorAll(".browser-run-input")) form.remove();
}
