// The page's Python worker's downloads (ours): every file its start fetches, counted as its
// bytes arrive, and the runtime's WebAssembly fetched as the smaller file the build made of it.
//
// Why: on a slow network the start is its downloads. The page showed a byte count taken from
// finished files only, so it stood still for minutes while the 10 MB WebAssembly file arrived;
// here each body is read through a counter (the page's bar moves as bytes come, boot.mjs), and
// Pyodide's own fetches go through the same counter (installed as the worker's `fetch`).
//
// Smaller artefacts: `make assets` stores pyodide.asm.wasm gzipped beside it (a third of its
// size; a static host such as GitHub Pages sends .wasm uncompressed). A fetch of the .wasm is
// answered from the .gz, inflated as it arrives (DecompressionStream), so Pyodide still
// compiles it while it downloads. A host that already undid the gzip (Content-Encoding) sends
// the WebAssembly itself: only the first bytes say which, and both work.
//
// One download per file during the start: a file asked for twice (Python started again
// without its snapshot, worker.mjs) is answered from the same download, never fetched again.

const GZIP_MAGIC = [0x1f, 0x8b];
// The runtime's files answered from a smaller artefact the build made beside them.
const GZIPPED_BESIDE = [/\/pyodide\.asm\.wasm$/];

/** @param {Uint8Array} bytes */
const isGzip = (bytes) => bytes.length >= 2 && bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1];

// What has arrived, for the page's bar and for the worker's choices (snapshotWorthFetching).
export class DownloadMeter {
  constructor() {
    this.bytes = 0;  // body bytes as stored on the host (a .gz counts as its own bytes)
    this.files = 0;  // files whose body has arrived whole
    this.open = 0;  // bodies still arriving
    /** @type {number | null} */ this.firstByteAt = null;
    /** @type {Set<string>} URLs counted here (resource timing counts the others: imports) */
    this.counted = new Set();
    /** @type {(() => void)[]} */ this.waiting = [];
  }

  /** @param {number} size */
  add(size) {
    if (this.firstByteAt === null) this.firstByteAt = performance.now();
    this.bytes += size;
    this.waiting.splice(0).forEach((wake) => wake());
  }

  // Bytes a second since the first arrived (the network as this start meets it).
  bytesPerSecond() {
    if (this.firstByteAt === null) return 0;
    return this.bytes / Math.max((performance.now() - this.firstByteAt) / 1000, 0.001);
  }

  // Resolves once the rate means something: `enough` bytes arrived, or `seconds` passed since
  // the first did (or since the question, when none has: a network that brings nothing).
  /** @param {number} enough @param {number} seconds */
  async measured(enough, seconds) {
    const asked = performance.now();
    const deadline = () => performance.now() - (this.firstByteAt ?? asked) >= seconds * 1000;
    while (this.bytes < enough && !deadline()) {
      await new Promise((wake) => {
        this.waiting.push(() => wake(undefined));
        setTimeout(wake, 100);
      });
    }
  }
}

// A body read through the meter: each chunk counted as it arrives, the file once it ends.
/** @param {ReadableStream<Uint8Array>} body @param {DownloadMeter} meter */
function counted(body, meter) {
  meter.open += 1;
  return body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      meter.add(chunk.byteLength);
      controller.enqueue(chunk);
    },
    flush() {
      meter.files += 1;
      meter.open -= 1;
    },
  }));
}

// An answer whose body is read through the meter.
/** @param {Response} response @param {DownloadMeter} meter */
export function countedResponse(response, meter) {
  if (!response.body) return response;
  meter.counted.add(response.url);
  return new Response(counted(response.body, meter),
    { status: response.status, statusText: response.statusText, headers: response.headers });
}

// (tsc's DOM types have DecompressionStream take any BufferSource; it is given bytes here.)
const gunzip = () => /** @type {ReadableWritablePair<Uint8Array, Uint8Array>} */ (
  /** @type {unknown} */ (new DecompressionStream("gzip")));

// The stream inflated when it is gzip (its first two bytes say), passed on as it is otherwise.
/** @param {ReadableStream<Uint8Array>} body @returns {ReadableStream<Uint8Array>} */
export function inflatedIfGzip(body) {
  const reader = body.getReader();
  /** @type {ReadableStreamDefaultReader<Uint8Array> | null} */
  let passed = null;  // what is passed on, once the first bytes have said which
  async function decide() {
    /** @type {Uint8Array[]} */
    const head = [];
    let size = 0;
    while (size < GZIP_MAGIC.length) {
      const { done, value } = await reader.read();
      if (done) break;
      head.push(value);
      size += value.byteLength;
    }
    const first = head.length === 1 ? head[0] : new Uint8Array(head.flatMap((chunk) => [...chunk.subarray(0, 2)]));
    /** @type {ReadableStream<Uint8Array>} */
    const whole = new ReadableStream({
      start(controller) { head.forEach((chunk) => controller.enqueue(chunk)); },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) { return reader.cancel(reason); },
    });
    return (isGzip(first) ? whole.pipeThrough(gunzip()) : whole).getReader();
  }
  return new ReadableStream({
    async pull(controller) {
      passed ||= await decide();
      const { done, value } = await passed.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) { return passed ? passed.cancel(reason) : reader.cancel(reason); },
  });
}

// The worker's `fetch`, counting every body it answers with (see the module's comment).
/** @param {DownloadMeter} meter @param {typeof fetch} plainFetch */
export function countingFetch(meter, plainFetch) {
  /** @type {Map<string, Promise<Response>>} one download per URL while `shared` */
  const downloads = new Map();
  let shared = true;

  /** @param {string} url @param {RequestInit} [init] @returns {Promise<Response>} */
  async function download(url, init) {
    if (GZIPPED_BESIDE.some((pattern) => pattern.test(new URL(url).pathname))) {
      const gzipped = await plainFetch(url + ".gz", withoutIntegrity(init)).catch(() => null);
      if (gzipped && gzipped.ok && gzipped.body) {
        meter.counted.add(gzipped.url);
        const headers = new Headers(gzipped.headers);
        ["Content-Encoding", "Content-Length"].forEach((name) => headers.delete(name));
        headers.set("Content-Type", "application/wasm");  // (WebAssembly's streaming compile asks for it)
        return new Response(inflatedIfGzip(counted(gzipped.body, meter)), { status: 200, headers });
      }
    }
    return countedResponse(await plainFetch(url, init), meter);
  }

  /** @param {RequestInfo | URL} input @param {RequestInit} [init] @returns {Promise<Response>} */
  function fetchCounted(input, init) {
    if (input instanceof Request) return plainFetch(input, init);  // (none of the start's fetches)
    const url = new URL(String(input), self.location.href).href;
    if (init && init.cache === "only-if-cached") return plainFetch(url, init);  // a question, not a download
    if (!shared) return download(url, init);
    if (!downloads.has(url)) downloads.set(url, download(url, init));
    // Each caller gets its own copy of the one download (a body can be read once).
    return /** @type {Promise<Response>} */ (downloads.get(url)).then((response) => response.clone());
  }

  return {
    fetch: fetchCounted,
    // Once Python is up: later fetches (packages, figures) are each their own download, and the
    // copies kept for a second start are let go.
    endSharing() {
      shared = false;
      downloads.clear();
    },
  };
}

// Pyodide passes the lock's Subresource Integrity for the files it names: the .gz is another
// file, checked by the WebAssembly compile instead (a corrupt file does not compile).
/** @param {RequestInit} [init] */
function withoutIntegrity(init) {
  if (!init || !init.integrity) return init;
  const { integrity, ...rest } = init;  // eslint-disable-line no-unused-vars
  return rest;
}
