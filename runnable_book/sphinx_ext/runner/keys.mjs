// Keys typed in an editor belong to the editor (ours).
//
// The page has shortcuts of its own: Sphinx's doctools.js focuses search on "/" (and may
// turn pages on arrow keys), listening on `document`; the theme opens its search dialog on
// Ctrl+K / Cmd+K, listening on `window` in the capture phase, i.e. before the editor ever
// sees the key. Two guards, so that inside an editor every key reaches CodeMirror and no
// page shortcut fires, while outside editors they all work as before:
//
// 1. Each editor's host stops keydown from bubbling further (doctools' listener never
//    hears keys typed in an editor).
// 2. A key with Ctrl, Alt or Meta typed in an editor is stopped at `window` in the capture
//    phase, ahead of the theme, and handed to the editor's own keymap (undo, select all,
//    ...). The listener that can run ahead of the theme must be registered before it:
//    that is the inline loader's (loader.js), which calls window.browserRunKeys set here.
//    Keys without those modifiers (letters, "/", Tab, Enter, Escape) are never stopped
//    there, so typing, composing and phone keyboards are left as CodeMirror expects.
import { runEditorKeymap } from "./editor.mjs";

/** @param {HTMLElement} host */
export function guardEditor(host) {
  host.addEventListener("keydown", (event) => event.stopPropagation());
}

//
// shortcuts: [{matches(event), run()}], the runner's own page-wide keys (Stop), which work
// in editors as well: checked first.
/** @typedef {{matches: (event: KeyboardEvent) => boolean, run: () => void}} Shortcut */
/** @param {Shortcut[]} [shortcuts] */
export function guardModifiedKeys(shortcuts = []) {
  window.browserRunKeys = (event) => {
    const shortcut = shortcuts.find((s) => s.matches(event));
    if (shortcut) {
      event.preventDefault();
      event.stopImmediatePropagation();
      shortcut.run();
      return;
    }
    const editor = event.target instanceof Element ? event.target.closest(".cm-editor") : null;
    if (!editor || !(event.ctrlKey || event.metaKey || event.altKey)) return;
    event.stopImmediatePropagation();
    if (runEditorKeymap(editor, event)) event.preventDefault();
  };
}
