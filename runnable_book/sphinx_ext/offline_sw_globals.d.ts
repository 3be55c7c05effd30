// The values runnable_book/sphinx_ext/offline.py writes into offline_sw.js in place of these names
// (write_worker), as the worker reads them: types only, for tsconfig.worker.json.
declare const __GROUPS__: import("./offline_types").Groups;
declare const __KEEPABLE__: string[];
declare const __OFFLINE_PAGE__: string;
