// Pyodide's types for the scripts that import its ES module by path: the Node scripts
// (the book's served copy, typed as "../../node_modules/pyodide/pyodide.mjs": python_snapshot.mjs
// says why not by name) and
// the page's Python worker (runner/worker.mjs: "../pyodide/pyodide.mjs", where make assets
// serves it). They are the package's own pyodide.d.ts, which tsc finds only for the name
// "pyodide" (package.json's "types"), not beside the .mjs. Types only, for
// tsconfig.node.json and tsconfig.worker.json.
declare module "*/pyodide/pyodide.mjs" {
  export * from "pyodide";
}
