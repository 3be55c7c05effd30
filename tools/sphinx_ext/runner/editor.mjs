// Entry point of the code editor bundle (ours), built by `make assets` with esbuild into
// _build/static/runner/editor.mjs from CodeMirror 6 on npm. Loaded only after the click.
import { EditorState } from "@codemirror/state";
import { EditorView, drawSelection, keymap } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { classHighlighter } from "@lezer/highlight";

// Highlighting by CSS class (tok-keyword, tok-string, ...), coloured in runner.css for
// the light and the dark theme alike.
export function createEditor(parent, source, { label, onRun }) {
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
        // Shift+Enter runs the cell, as in Jupyter. Tab indents; Escape then Tab leaves
        // the editor (CodeMirror's rule, so the keyboard is never trapped).
        keymap.of([{ key: "Shift-Enter", run: () => (onRun(), true) }, ...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.contentAttributes.of({ "aria-label": label }),
      ],
    }),
  });
  return {
    view,
    source: () => view.state.doc.toString(),
    remeasure: () => view.requestMeasure(),
  };
}
