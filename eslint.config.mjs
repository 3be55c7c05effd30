// eslint for the book's own JavaScript (`make test-sources`; alone:
// `node_modules/.bin/eslint`): the recommended rules, plus a few that catch real bugs.
// No style rules: formatting is not checked.
import js from "@eslint/js";
import globals from "globals";

const bugs = {
  "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
  "no-use-before-define": ["error", { functions: false, classes: false, variables: false }],
  "no-shadow-restricted-names": "error",
  "no-self-compare": "error",
  "no-template-curly-in-string": "error",
  "no-unmodified-loop-condition": "error",
  "no-unreachable-loop": "error",
  "no-constructor-return": "error",
  "no-promise-executor-return": "error",
  "array-callback-return": "error",
  "eqeqeq": ["error", "smart"],
};

// Files whose functions Playwright runs in a page (each read by the .py of the same name).
const PAGE_SCRIPTS = ["tools/pipeline/print_*.mjs", "tools/pipeline/draw_diagrams.mjs", "tools/browser/*.mjs", "tools/checks/*.mjs", "tools/bench/*.mjs"];

export default [
  { ignores: ["node_modules/", "_build/", ".venv/"] },
  {
    files: ["tools/sphinx_ext/runner/*.{js,mjs}", "tools/sphinx_ext/offline_*.{js,mjs}"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.browser } },
    rules: { ...js.configs.recommended.rules, ...bugs },
  },
  {
    // Classic scripts: the inline loader and the service worker.
    files: ["tools/sphinx_ext/runner/loader.js", "tools/sphinx_ext/offline_sw.js"],
    languageOptions: { sourceType: "script" },
  },
  {
    files: ["tools/sphinx_ext/offline_sw.js"],
    // __GROUPS__, __KEEPABLE__, __OFFLINE_PAGE__: filled in by tools/sphinx_ext/offline.py.
    languageOptions: { globals: { ...globals.serviceworker, __GROUPS__: "readonly", __KEEPABLE__: "readonly", __OFFLINE_PAGE__: "readonly" } },
  },
  {
    files: ["tools/sphinx_ext/runner/worker.mjs"],
    languageOptions: { globals: { ...globals.worker } },
  },
  {
    files: ["tools/pipeline/*.mjs", "tests/js/*.mjs", "eslint.config.mjs"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.node } },
    rules: { ...js.configs.recommended.rules, ...bugs },
  },
  {
    // The tools' page scripts, run in a page by Playwright, not in Node: the print scripts,
    // the diagrams' drawing, the browser driver's, the checks', the benchmarks'. page.evaluate
    // is sent one exported function's text (tools/common/page_scripts.py, page_function), not
    // the module, so a helper declared beside it would be undefined in the page.
    files: PAGE_SCRIPTS,
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.browser } },
    rules: {
      ...js.configs.recommended.rules, ...bugs,
      "no-restricted-syntax": ["error", {
        selector: "Program > :not(ExportNamedDeclaration)",
        message: "A page script's top level is `export const name = (...) => {...};` only: page.evaluate gets one function's text, so it may use nothing declared outside it.",
      }],
    },
  },
  {
    // The unit tests run the page's modules against a stub browser (tests/js/browser_stub.mjs).
    files: ["tests/js/*.mjs"],
    languageOptions: { globals: { ...globals.node, window: "writable", document: "writable" } },
  },
];
