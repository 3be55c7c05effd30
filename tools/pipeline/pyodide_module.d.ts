// Pyodide's types for the scripts that import its ES module by path
// ("../../node_modules/pyodide/pyodide.mjs": python_snapshot.mjs says why not by name): the
// package's own pyodide.d.ts, which tsc finds only for the name "pyodide" (package.json's
// "types"), not beside the .mjs. Types only, for tsconfig.node.json.
declare module "*/pyodide/pyodide.mjs" {
  export * from "pyodide";
}
