// Just enough of a browser for the runner's pure logic under `node --test` (ours): one
// origin's localStorage, shared by "tabs", each tab a window with its own event listeners,
// and a document whose <html> keeps data-* attributes. A module is imported after
// installBrowser(), since some read `window` or `document` when they load.
export class FakeStorage {
  constructor() { this.items = new Map(); }
  getItem(key) { return this.items.has(key) ? this.items.get(key) : null; }
  setItem(key, value) { this.items.set(key, String(value)); }
  removeItem(key) { this.items.delete(key); }
}

// A tab of the origin: `window` while code of that tab runs (makeTab(...).enter()).
export function makeTab(storage) {
  const listeners = {};
  const tab = {
    localStorage: storage,
    addEventListener(type, listener) { (listeners[type] ||= []).push(listener); },
    // Another tab wrote `key`: the `storage` event this tab hears.
    hear(key) {
      for (const listener of listeners.storage || []) listener({ key, newValue: storage.getItem(key) });
    },
    enter() { globalThis.window = tab; return tab; },
  };
  return tab;
}

export function installBrowser(path = "/book/15_11_exercises.html") {
  globalThis.location = { pathname: path, href: `http://127.0.0.1${path}` };
  globalThis.document = {
    documentElement: { dataset: {} },
    querySelectorAll: () => [],
    querySelector: () => null,
    getElementById: () => null,
  };
  globalThis.Node = { TEXT_NODE: 3 };
  const storage = new FakeStorage();
  makeTab(storage).enter();
  return storage;
}
