// The page's Python worker's downloads (runner/downloads.mjs) and its download bar's wording
// (runner/download_bar.mjs): bytes counted as they arrive, the WebAssembly answered from its
// gzipped copy (inflated whether or not the host already undid the gzip), one download per
// file while Python starts, and the time left said in minutes and seconds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";

const { DownloadMeter, countingFetch, inflatedIfGzip } = await import("../../runnable_book/sphinx_ext/runner/downloads.mjs");
const { timeLeft } = await import("../../runnable_book/sphinx_ext/runner/download_bar.mjs");

// WebAssembly's magic, then bytes gzip cannot shrink much (a linear congruential sequence).
let seed = 1;
const WASM = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  ...Array.from({ length: 20000 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 23)]);

// A body that arrives `size` bytes at a time, as a slow network brings it.
/** @param {Uint8Array} bytes @param {number} size @param {number} [everyMs] */
function trickle(bytes, size, everyMs = 0) {
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      if (everyMs) await new Promise((resolve) => { setTimeout(resolve, everyMs); });
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

// A host: path -> bytes; every fetch noted.
/** @param {Record<string, Uint8Array>} files */
function host(files) {
  const asked = [];
  /** @type {typeof fetch} */
  const plainFetch = async (input) => {
    const url = String(input);
    asked.push(url);
    const path = new URL(url).pathname;
    if (!(path in files)) return new Response("not found", { status: 404 });
    return new Response(trickle(files[path], 1000, 2), { status: 200 });
  };
  return { asked, plainFetch };
}

globalThis.self = /** @type {any} */ ({ location: { href: "http://127.0.0.1/_static/runner/worker.mjs" } });

test("a gzipped stream is inflated, a plain one passed on, however the bytes are split", async () => {
  for (const [size, bytes] of [[1, WASM.subarray(0, 300)], [2, WASM.subarray(0, 300)], [1000, WASM], [100000, WASM]]) {
    const inflated = new Uint8Array(await new Response(inflatedIfGzip(trickle(gzipSync(bytes), size))).arrayBuffer());
    assert.deepEqual(inflated, bytes, `gzip in chunks of ${size}`);
    const passed = new Uint8Array(await new Response(inflatedIfGzip(trickle(bytes, size))).arrayBuffer());
    assert.deepEqual(passed, bytes, `plain in chunks of ${size}`);
  }
});

test("the WebAssembly is answered from its gzipped copy, its bytes counted as they arrive", async () => {
  const gzipped = gzipSync(WASM);
  const { asked, plainFetch } = host({ "/_static/pyodide/pyodide.asm.wasm.gz": gzipped });
  const meter = new DownloadMeter();
  const { fetch } = countingFetch(meter, plainFetch);
  const response = await fetch("http://127.0.0.1/_static/pyodide/pyodide.asm.wasm");
  assert.equal(response.headers.get("Content-Type"), "application/wasm");
  const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader();
  await reader.read();
  assert.ok(meter.bytes > 0 && meter.bytes < gzipped.length, `counted while arriving: ${meter.bytes}`);
  assert.equal(meter.open, 1);
  while (!(await reader.read()).done) { /* the rest */ }
  assert.equal(meter.bytes, gzipped.length, "the bytes the host sent (the .gz), not the inflated ones");
  assert.deepEqual(asked, ["http://127.0.0.1/_static/pyodide/pyodide.asm.wasm.gz"]);
  assert.equal(meter.files, 1);
  assert.equal(meter.open, 0);
});

test("the WebAssembly is not asked for before the question asked first is answered", async () => {
  const { asked, plainFetch } = host({ "/_static/pyodide/pyodide.asm.wasm.gz": gzipSync(WASM) });
  /** @type {(kept: boolean) => void} */
  let answer = () => {};
  const question = new Promise((resolve) => { answer = resolve; });
  const { fetch } = countingFetch(new DownloadMeter(), plainFetch, {}, () => {}, question);
  const response = fetch("http://127.0.0.1/_static/pyodide/pyodide.asm.wasm");
  await fetch("http://127.0.0.1/_static/pyodide/pyodide-lock.json");  // (others do not wait: a 404 here)
  assert.deepEqual(asked.map((url) => url.split("/").pop()), ["pyodide-lock.json"]);
  answer(false);
  assert.deepEqual(new Uint8Array(await (await response).arrayBuffer()), WASM);
  assert.deepEqual(asked.map((url) => url.split("/").pop()), ["pyodide-lock.json", "pyodide.asm.wasm.gz"]);
});

test("without a gzipped copy the WebAssembly itself is fetched", async () => {
  const { asked, plainFetch } = host({ "/_static/pyodide/pyodide.asm.wasm": WASM });
  const { fetch } = countingFetch(new DownloadMeter(), plainFetch);
  const bytes = new Uint8Array(await (await fetch("http://127.0.0.1/_static/pyodide/pyodide.asm.wasm")).arrayBuffer());
  assert.deepEqual(bytes, WASM);
  assert.deepEqual(asked.map((url) => url.split("/").pop()), ["pyodide.asm.wasm.gz", "pyodide.asm.wasm"]);
});

test("while Python starts a file asked twice is one download; afterwards each fetch is its own", async () => {
  const lock = new TextEncoder().encode('{"packages": {}}');
  const { asked, plainFetch } = host({ "/_static/pyodide/pyodide-lock.json": lock });
  const meter = new DownloadMeter();
  const downloads = countingFetch(meter, plainFetch);
  const url = "http://127.0.0.1/_static/pyodide/pyodide-lock.json";
  const [first, second] = await Promise.all([downloads.fetch(url), downloads.fetch(url)]);
  assert.deepEqual(await first.json(), { packages: {} });
  assert.deepEqual(await second.json(), { packages: {} });
  assert.equal(asked.length, 1);
  assert.equal(meter.bytes, lock.length, "counted once");
  downloads.endSharing();
  await (await downloads.fetch(url)).arrayBuffer();
  assert.equal(asked.length, 2);
});

test("the rate is known once enough has arrived", async () => {
  const meter = new DownloadMeter();
  setTimeout(() => meter.add(600), 10);
  setTimeout(() => meter.add(600), 20);
  await meter.measured(1000, 60);
  assert.equal(meter.bytes, 1200);
  assert.ok(meter.bytesPerSecond() > 0);
  const silent = new DownloadMeter();  // a network that brings nothing: the question still ends
  await silent.measured(1000, 0.05);
  assert.equal(silent.bytesPerSecond(), 0);
});

test("the time left is said in minutes and seconds, rounded", () => {
  assert.equal(timeLeft(Infinity), "working out the time left");
  assert.equal(timeLeft(0.2), "about 1 s left");
  assert.equal(timeLeft(42.4), "about 42 s left");
  assert.equal(timeLeft(60), "about 1 min left");
  assert.equal(timeLeft(131), "about 2 min 10 s left");
});
