// A download on a line that drops (runner/downloads.mjs): a body that breaks off is
// resumed with Range from where it stopped (206 appended; a 200 passed over up to there, not
// counted twice), a stalled one is aborted and asked again, the integrity a caller gives is
// checked on the spliced whole, and only attempts in a row that brought nothing give up, with
// a DownloadFailed that says which file and how much arrived. tests/test_dropped_line.py drops
// the real line in a browser; here a fake host does, answer by answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";

const { DownloadFailed, DownloadMeter, countingFetch } = await import("../../runnable_book/sphinx_ext/runner/downloads.mjs");

globalThis.self = /** @type {any} */ ({ location: { href: "http://127.0.0.1/_static/runner/worker.mjs" } });

let seed = 7;
const FILE = new Uint8Array(Array.from({ length: 50_000 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 23));
const URL_ = "http://127.0.0.1/_static/pyodide/numpy.whl";
// No waiting between attempts, and a stall noticed within a tenth of a second (the real ones:
// STALL_MS, BACKOFF_MS): the tests wait for the download's end, never for a clock.
const QUICK = { stallMs: 100, retries: 4, backoffMs: [0, 0, 0, 0] };

/** How the fake host answers its nth request (from 0): `cut` bytes then the connection drops
 * (null: the whole body), `stall` bytes then nothing ever again, `ignoreRange`: a 200 whatever
 * was asked, `refuse`: the request fails before an answer, `version`: the file's Last-Modified.
 * @typedef {{cut?: number | null, stall?: number, ignoreRange?: boolean, refuse?: boolean, version?: string}} Plan */

/** @param {Plan[]} plans one per request, in order; later requests answer whole */
function droppingHost(plans) {
  /** @type {{range: string | null, ifRange: string | null, integrity: string | undefined}[]} */
  const asked = [];
  let sent = 0;  // body bytes the host sent, as a line counts them
  /** @type {typeof fetch} */
  const plainFetch = async (input, init = {}) => {
    const plan = plans[asked.length] || {};
    const headers = new Headers(init.headers);
    asked.push({ range: headers.get("Range"), ifRange: headers.get("If-Range"), integrity: init.integrity });
    if (plan.refuse) throw new TypeError("Failed to fetch");
    const range = /^bytes=(\d+)-$/.exec(headers.get("Range") || "");
    const from = range && !plan.ignoreRange ? Number(range[1]) : 0;
    const body = FILE.subarray(from);
    const signal = init.signal;
    let at = 0;
    const stream = new ReadableStream({
      start(controller) {
        signal?.addEventListener("abort", () => controller.error(signal.reason));
      },
      async pull(controller) {
        if (signal?.aborted) return;
        if (plan.stall !== undefined && at >= plan.stall) return new Promise(() => {});  // (nothing, ever)
        if (plan.cut != null && at >= plan.cut) return controller.error(new TypeError("network error"));
        if (at >= body.length) return controller.close();
        const end = Math.min(at + 4096, body.length, plan.cut ?? Infinity, plan.stall ?? Infinity);
        controller.enqueue(body.slice(at, end));
        sent += end - at;
        at = end;
      },
    });
    const answerHeaders = { "Content-Length": String(body.length), "Last-Modified": plan.version || "Mon, 01 Jun 2026 00:00:00 GMT" };
    if (from) Object.assign(answerHeaders, { "Content-Range": `bytes ${from}-${FILE.length - 1}/${FILE.length}` });
    return new Response(stream, { status: from ? 206 : 200, headers: answerHeaders });
  };
  return { asked, plainFetch, sent: () => sent };
}

/** @param {Response} response */
const bytesOf = async (response) => new Uint8Array(await response.arrayBuffer());

test("a body that breaks off twice is resumed with Range, each byte sent and counted once", async () => {
  const host = droppingHost([{ cut: 12_000 }, { cut: 20_000 }]);
  const meter = new DownloadMeter();
  const downloads = countingFetch(meter, host.plainFetch, QUICK);
  downloads.endSharing();
  const response = await downloads.fetch(URL_);
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(host.asked.map((a) => a.range), [null, "bytes=12000-", "bytes=32000-"]);
  assert.equal(host.asked[1].ifRange, "Mon, 01 Jun 2026 00:00:00 GMT", "the rest only of the file begun");
  assert.equal(host.sent(), FILE.length, "nothing sent twice");
  assert.equal(meter.bytes, FILE.length);
  assert.equal(meter.resent, 0);
  assert.deepEqual([meter.files, meter.open], [1, 0]);
  assert.deepEqual(downloads.takeFailures(), []);
});

test("a host that ignores Range sends the file whole again: passed over up to where it broke, counted once", async () => {
  const host = droppingHost([{ cut: 30_000 }, { ignoreRange: true }]);
  const meter = new DownloadMeter();
  const downloads = countingFetch(meter, host.plainFetch, QUICK);
  const seen = [];
  /** @type {number[]} what the meter showed after each chunk the consumer read */
  const reader = /** @type {ReadableStream<Uint8Array>} */ ((await downloads.fetch(URL_)).body).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    seen.push(read.value);
    assert.ok(meter.bytes <= FILE.length, `counted ${meter.bytes} of a ${FILE.length}-byte file`);
  }
  assert.deepEqual(new Uint8Array(Buffer.concat(seen)), FILE);
  assert.equal(host.sent(), FILE.length + 30_000, "the host sent the first 30 kB twice");
  assert.equal(meter.bytes, FILE.length, "the bar counts each byte of the file once");
  assert.equal(meter.resent, 30_000, "and the meter says what came twice");
});

test("a download that stalls is aborted and asked again from where it stopped", async () => {
  const host = droppingHost([{ stall: 8192 }]);
  const meter = new DownloadMeter();
  const downloads = countingFetch(meter, host.plainFetch, QUICK);
  assert.deepEqual(await bytesOf(await downloads.fetch(URL_)), FILE);
  assert.deepEqual(host.asked.map((a) => a.range), [null, "bytes=8192-"]);
  assert.equal(meter.bytes, FILE.length);
});

test("a file that changed on the host while it downloaded is not spliced: the download says so", async () => {
  const host = droppingHost([{ cut: 10_000 }, { ignoreRange: true, version: "Tue, 02 Jun 2026 00:00:00 GMT" }]);
  const downloads = countingFetch(new DownloadMeter(), host.plainFetch, QUICK);
  const response = await downloads.fetch(URL_);
  await assert.rejects(bytesOf(response), (error) => error instanceof DownloadFailed && /another version/.test(error.message));
});

test("the caller's integrity is checked on the spliced whole, not asked of the browser", async () => {
  const integrity = `sha256-${createHash("sha256").update(FILE).digest("base64")}`;
  const host = droppingHost([{ cut: 25_000 }]);
  const downloads = countingFetch(new DownloadMeter(), host.plainFetch, QUICK);
  assert.deepEqual(await bytesOf(await downloads.fetch(URL_, { integrity })), FILE);
  assert.deepEqual(host.asked.map((a) => a.integrity), [undefined, undefined]);
  const wrong = `sha256-${createHash("sha256").update("another file").digest("base64")}`;
  const again = countingFetch(new DownloadMeter(), droppingHost([{ cut: 25_000 }]).plainFetch, QUICK);
  await assert.rejects(bytesOf(await again.fetch(URL_, { integrity: wrong })), /integrity/);
});

test("while bytes flow it never gives up; after the attempts in a row that bring nothing it says what arrived", async () => {
  // Cut every few kilobytes, many more times than the retries: each answer brings bytes.
  const choppy = droppingHost(Array.from({ length: 12 }, () => ({ cut: 4096 })));
  const downloads = countingFetch(new DownloadMeter(), choppy.plainFetch, QUICK);
  assert.deepEqual(await bytesOf(await downloads.fetch(URL_)), FILE);
  assert.equal(choppy.asked.length, 13);

  // 20 kB, then the connection is refused every time: the four retries bring nothing.
  const dead = droppingHost([{ cut: 20_000 }, ...Array.from({ length: 10 }, () => ({ refuse: true }))]);
  const meter = new DownloadMeter();
  const failing = countingFetch(meter, dead.plainFetch, QUICK);
  const response = await failing.fetch(URL_);
  await assert.rejects(bytesOf(response), (error) => {
    assert.ok(error instanceof DownloadFailed, String(error));
    assert.equal(error.message, "The download of numpy.whl failed: 0.02 of 0.05 MB arrived, then 4 tries again brought no byte.");
    assert.deepEqual([error.received, error.total], [20_000, FILE.length]);
    return true;
  });
  assert.equal(dead.asked.length, 5);
  assert.equal(failing.takeFailures().length, 1, "worker.mjs is told");
  assert.equal(meter.open, 0);
});

test("a request that fails before any answer is tried again online, and fails at once offline", async () => {
  const flaky = droppingHost([{ refuse: true }, { refuse: true }]);
  const downloads = countingFetch(new DownloadMeter(), flaky.plainFetch, QUICK);
  assert.deepEqual(await bytesOf(await downloads.fetch(URL_)), FILE);
  assert.equal(flaky.asked.length, 3);

  const online = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: { onLine: false }, configurable: true });
  try {
    const offline = droppingHost([{ refuse: true }]);
    const offlineDownloads = countingFetch(new DownloadMeter(), offline.plainFetch, QUICK);
    await assert.rejects(offlineDownloads.fetch(URL_), (error) => error instanceof TypeError && error.message === "Failed to fetch");
    assert.equal(offline.asked.length, 1, "offline: no attempt helps");
    assert.deepEqual(offlineDownloads.takeFailures(), [], "the browser's own error: worker.mjs says what is not stored");
  } finally {
    if (online) Object.defineProperty(globalThis, "navigator", online);
    else delete /** @type {any} */ (globalThis).navigator;
  }
});
