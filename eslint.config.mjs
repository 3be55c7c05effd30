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
const PAGE_SCRIPTS = ["runnable_book/pipeline/print_*.mjs", "runnable_book/pipeline/draw_diagrams.mjs", "runnable_book/browser/*.mjs", "runnable_book/checks/*.mjs", "runnable_book/bench/*.mjs"];

export default [
  { ignores: ["node_modules/", "_build/", ".venv/"] },
  {
    files: ["runnable_book/sphinx_ext/runner/*.{js,mjs}", "runnable_book/sphinx_ext/offline_*.{js,mjs}"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.browser } },
    rules: { ...js.configs.recommended.rules, ...bugs },
  },
  {
    // Classic scripts: the inline loader and the service worker.
    files: ["runnable_book/sphinx_ext/runner/loader.js", "runnable_book/sphinx_ext/offline_sw.js"],
    languageOptions: { sourceType: "script" },
  },
  {
    files: ["runnable_book/sphinx_ext/offline_sw.js"],
    // __GROUPS__, __KEEPABLE__, __OFFLINE_PAGE__: filled in by runnable_book/sphinx_ext/offline.py.
    languageOptions: { globals: { ...globals.serviceworker, __GROUPS__: "readonly", __KEEPABLE__: "readonly", __OFFLINE_PAGE__: "readonly" } },
  },
  {
    files: ["runnable_book/sphinx_ext/runner/worker.mjs"],
    languageOptions: { globals: { ...globals.worker } },
  },
  {
    // Node scripts: the build's (pipeline), the unit tests, the benchmarks run in Node (bench/in_node).
    files: ["runnable_book/pipeline/*.mjs", "runnable_book/bench/in_node/*.mjs", "tests/js/*.mjs", "eslint.config.mjs"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.node } },
    rules: { ...js.configs.recommended.rules, ...bugs },
  },
  {
    // The tools' page scripts, run in a page by Playwright, not in Node: the print scripts,
    // the diagrams' drawing, the browser driver's, the checks', the benchmarks'. page.evaluate
    // is sent one exported function's text (runnable_book/common/page_scripts.py, page_function), not
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
