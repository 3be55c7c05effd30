// Entry point of the code editor bundle (ours), built by `make assets` with esbuild into
// _build/static/runner/editor.mjs from CodeMirror 6 on npm. Loaded only after the click.
import { EditorState, RangeSetBuilder } from "@codemirror/state";
import { Decoration, EditorView, ViewPlugin, drawSelection, keymap, runScopeHandlers } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab, isolateHistory } from "@codemirror/commands";
import { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { classHighlighter } from "@lezer/highlight";

// After Escape, Tab and Shift+Tab leave the editor until any other key is pressed (a day
// is "no time window": CodeMirror's own Escape gives two seconds, too short to read the hint).
const LEAVE_MODE_MS = 24 * 60 * 60 * 1000;

// A long line wraps (a phone is narrow), but a wrapped line that went back to column 0 would
// mislead about Python's indentation: each line's continuation hangs HANG columns past the
// line's own indentation (as the printed book wraps code), its first row where it always was.
const HANG = 4;
const TAB_SIZE = 4;
/** @param {string} text */
function indentColumns(text) {
  let columns = 0;
  for (const character of text) {
    if (character === " ") columns += 1;
    else if (character === "\t") columns += TAB_SIZE - (columns % TAB_SIZE);
    else break;
  }
  return columns;
}
const hangingIndent = ViewPlugin.fromClass(class {
  /** @param {EditorView} view */
  constructor(view) { this.decorations = this.build(view); }
  /** @param {import("@codemirror/view").ViewUpdate} update */
  update(update) {
    if (update.docChanged || update.viewportChanged) this.decorations = this.build(update.view);
  }
  /** @param {EditorView} view */
  build(view) {
    /** @type {RangeSetBuilder<Decoration>} */
    const builder = new RangeSetBuilder();
    for (const { from, to } of view.visibleRanges) {
      for (let pos = from; pos <= to;) {
        const line = view.state.doc.lineAt(pos);
        const hang = indentColumns(line.text) + HANG;
        // (6px: CodeMirror's own padding of a line)
        builder.add(line.from, line.from, Decoration.line({
          attributes: { style: `padding-left: calc(${hang}ch + 6px); text-indent: -${hang}ch` },
        }));
        pos = line.to + 1;
      }
    }
    return builder.finish();
  }
}, { decorations: (plugin) => plugin.decorations });

// Highlighting by CSS class (tok-keyword, tok-string, ...), coloured in runner.css for
// the light and the dark theme alike.
//   label:      the editor's accessible name
//   describedBy: id of the visible keyboard hint (its accessible description)
//   onRun:      Shift+Enter
//   onChange:   called with the new source after every edit (kept work)
//   onLeaveMode: called with true after Escape (Tab now leaves), false when editing again
/** @typedef {{label: string, describedBy?: string, onRun: () => void, onChange?: (source: string) => void,
 *   onLeaveMode?: (on: boolean) => void}} EditorOptions */
/** What a cell holds of its editor.
 * @typedef {{view: EditorView, source: () => string, setSource: (text: string) => void, remeasure: () => void,
 *   focus: () => void}} Editor */
/** @param {HTMLElement} parent @param {string} source @param {EditorOptions} options @returns {Editor} */
export function createEditor(parent, source, { label, describedBy, onRun, onChange, onLeaveMode }) {
  /** @param {boolean} on @returns {(view: EditorView) => boolean} */
  const leave = (on) => (view) => {
    view.setTabFocusMode(on ? LEAVE_MODE_MS : false);
    if (onLeaveMode) onLeaveMode(on);
    return on;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: source,
      extensions: [
        history(),
        drawSelection(),
        indentOnInput(),
        indentUnit.of("    "),
        bracketMatching(),
        python(),
        syntaxHighlighting(classHighlighter),
        EditorView.lineWrapping,
        hangingIndent,
        // Shift+Enter runs the cell, as in Jupyter. Tab indents; Escape then Tab leaves.
        keymap.of([
          { key: "Shift-Enter", run: () => (onRun(), true) },
          { key: "Escape", run: leave(true) },
          ...defaultKeymap, ...historyKeymap, indentWithTab,
        ]),
        EditorView.domEventHandlers({
          focus: (event, view) => void leave(false)(view),
          keydown: (event, view) => {
            if (!["Escape", "Tab", "Shift"].includes(event.key) && onLeaveMode) onLeaveMode(false);
            return false;
          },
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && onChange) onChange(update.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": label, ...(describedBy ? { "aria-describedby": describedBy } : {}) }),
      ],
    }),
  });
  return {
    view,
    source: () => view.state.doc.toString(),
    // Replace the whole text as one undoable edit (Reset, "take the book's"): Ctrl+Z brings
    // the reader's text back. Its own step in the history: CodeMirror joins edits made within
    // 500 ms into one, so a kept edit restored just before "take the book's" would otherwise be
    // undone with it, back to the book's older code.
    setSource: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text },
                                         annotations: isolateHistory.of("full") }),
    remeasure: () => view.requestMeasure(),
    focus: () => view.focus(),
  };
}

// A key pressed with Ctrl, Alt or Meta inside an editor, stopped before the page's own
// window-level shortcuts (the theme's Ctrl+K) could see it: give it to the editor's keymap.
/** @param {Element} dom @param {KeyboardEvent} event */
export function runEditorKeymap(dom, event) {
  const view = EditorView.findFromDOM(/** @type {HTMLElement} */ (dom));
  return !!view && runScopeHandlers(view, event, "editor");
}
