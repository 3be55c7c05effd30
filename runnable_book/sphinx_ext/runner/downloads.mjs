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
//
// Never failed while bytes flow: a phone line drops connections and stalls, and a
// download that failed at its first dropped connection failed the reader's whole start (Pyodide's
// loadPackage retries nothing). Each download here is a stream spliced from as many answers as
// it takes: a body that breaks off (the connection dropped, or no byte for STALL_MS) is asked
// again from where it stopped (`Range: bytes=N-`, which GitHub Pages answers with 206); a host
// that ignores Range sends the whole file again (200), whose first N bytes are passed over, not
// counted twice. A download gives up only after RETRIES attempts in a row that brought no byte,
// and then says so (DownloadFailed: which file, how much of it arrived); offline it gives up at
// once with the browser's own error, as before (worker.mjs says what is not stored).

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
    this.resent = 0;  // bytes that arrived again (a host that ignored Range): not in `bytes`
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

// A download stalls when no byte has arrived for this long while it is read (a phone line that
// hands over: longer than the seconds a slow line goes quiet between bursts, short enough that a
// dead connection is asked again before a reader gives up on the bar). Only the wait for bytes
// counts: a consumer that reads slowly (WebAssembly compiling) is no stall.
export const STALL_MS = 30_000;
// Attempts in a row that brought no byte before a download gives up, and the waits between
// them (a dropped line is often back within seconds; four tries span about a quarter minute).
export const RETRIES = 4;
export const BACKOFF_MS = [1000, 2000, 4000, 8000];

/** How long and how often a download is tried (the tests pass shorter ones).
 * @typedef {{stallMs: number, retries: number, backoffMs: number[]}} Patience */
/** @type {Patience} */
const PATIENCE = { stallMs: STALL_MS, retries: RETRIES, backoffMs: BACKOFF_MS };

/** @param {number} bytes */
const megabytes = (bytes) => (bytes / 1e6).toFixed(bytes < 10e6 ? 2 : 1);

// A download that gave up while the browser was online: which file, how much of it arrived.
export class DownloadFailed extends Error {
  /** @param {string} url @param {number} received @param {number | null} total @param {string} why */
  constructor(url, received, total, why) {
    const name = decodeURIComponent(new URL(url).pathname.split("/").pop() || url);
    const arrived = total ? `${megabytes(received)} of ${megabytes(total)} MB` : `${megabytes(received)} MB`;
    super(`The download of ${name} failed: ${arrived} arrived, then ${why}.`);
    this.name = "DownloadFailed";
    this.url = url;
    this.received = received;
    this.total = total;
  }
}

class Stalled extends Error {
  constructor() {
    super("no byte arrived in time");
    this.name = "Stalled";
  }
}

// Offline the browser's own error is the answer at once (worker.mjs words it): no attempt helps.
const offline = () => typeof navigator !== "undefined" && navigator.onLine === false;

/** @param {number} ms */
const pause = (ms) => new Promise((wake) => { setTimeout(wake, ms); });

// One request, aborted when it stalls (the caller's own abort passes through): `watch` runs the
// stall's clock over one wait for the network (the answer's headers, then each read).
/** @param {typeof fetch} plainFetch @param {string} url @param {RequestInit} init @param {number} stallMs */
function watchedRequest(plainFetch, url, init, stallMs) {
  const controller = new AbortController();
  const caller = init.signal;
  const passOn = () => controller.abort(caller && caller.reason);
  if (caller) caller.addEventListener("abort", passOn, { once: true });
  /** @template T @param {Promise<T>} waited @returns {Promise<T>} */
  const watch = (waited) => {
    const timer = setTimeout(() => controller.abort(new Stalled()), stallMs);
    return waited.finally(() => clearTimeout(timer));
  };
  const end = () => { if (caller) caller.removeEventListener("abort", passOn); };
  const response = watch(plainFetch(url, { ...init, signal: controller.signal })).catch((error) => {
    end();
    throw controller.signal.aborted && controller.signal.reason instanceof Stalled ? controller.signal.reason : error;
  });
  return { response, watch, end, stalled: () => controller.signal.reason instanceof Stalled };
}

// Subresource Integrity, checked here (the request is made without it: the browser would hold
// every byte of a file it checks until the last, so the bar could not move and a broken-off
// body could not be resumed). The strongest algorithm given decides, as the browser's check does.
const SRI_ALGORITHMS = { sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" };
/** @param {string} integrity @param {Uint8Array[]} chunks */
async function matchesIntegrity(integrity, chunks) {
  const given = integrity.trim().split(/\s+/).map((token) => token.split("?")[0].split("-"))
    .filter(([algorithm, hash]) => algorithm in SRI_ALGORITHMS && hash);
  if (!given.length) return true;  // (no algorithm the browser knows either: it checks nothing)
  const strongest = ["sha512", "sha384", "sha256"].find((algorithm) => given.some(([name]) => name === algorithm));
  const whole = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) { whole.set(chunk, at); at += chunk.byteLength; }
  const name = /** @type {keyof typeof SRI_ALGORITHMS} */ (strongest);
  const digest = new Uint8Array(await crypto.subtle.digest(SRI_ALGORITHMS[name], whole));
  const base64 = btoa(String.fromCharCode(...digest));
  return given.some(([algorithm, hash]) => algorithm === strongest && hash === base64);
}

// A body's whole size as the host stores it, when the answer says (a compressed answer's
// decoded size is not said anywhere).
/** @param {Response} response */
function sizeOf(response) {
  const range = /\/(\d+)$/.exec(response.headers.get("Content-Range") || "");
  if (range) return Number(range[1]);
  const length = response.headers.get("Content-Length");
  return length !== null && !isEncoded(response) ? Number(length) : null;
}
/** @param {Response} response */
const isEncoded = (response) => !["", "identity"].includes((response.headers.get("Content-Encoding") || "").toLowerCase());

// The download of `url`, its body a stream spliced from as many answers as it takes (see the
// module's comment), each byte counted once as it arrives. Rejects only when no answer came:
// offline at once (the browser's error), online after `retries` attempts (DownloadFailed).
/** @param {typeof fetch} plainFetch @param {string} url @param {RequestInit | undefined} init
 *  @param {DownloadMeter} meter @param {Patience} patience @param {(failure: DownloadFailed) => void} failed */
async function resumingDownload(plainFetch, url, init, meter, patience, failed) {
  const { integrity, ...request } = init || {};
  const caller = request.signal;
  let fruitless = 0;  // attempts in a row that brought no byte
  /** @param {unknown} error @param {number} received @param {number | null} total */
  async function again(error, received, total) {
    if ((caller && caller.aborted) || offline()) throw error;
    fruitless += 1;
    if (fruitless > patience.retries) {
      const why = error instanceof Stalled
        ? `no byte came for ${Math.round(patience.stallMs / 1000)} s (tried again ${patience.retries} times)`
        : `${patience.retries} tries again brought no byte`;
      const failure = new DownloadFailed(url, received, total, why);
      failed(failure);
      throw failure;
    }
    await pause(patience.backoffMs[Math.min(fruitless, patience.backoffMs.length) - 1] || 0);
  }

  /** @type {ReturnType<typeof watchedRequest>} */
  let attempt;
  /** @type {Response} */
  let first;
  for (;;) {
    attempt = watchedRequest(plainFetch, url, request, patience.stallMs);
    try {
      first = await attempt.response;
      break;
    } catch (error) {
      await again(error, 0, null);
    }
  }
  if (!first.ok || !first.body) {
    attempt.end();
    return countedResponse(first, meter);  // (an HTTP error is the host's answer, not a dropped line)
  }
  meter.counted.add(first.url);
  const total = sizeOf(first);
  // Range counts the bytes as stored; a compressed answer's body is the decoded bytes: such a
  // file is asked again whole, and what was passed on is passed over.
  const ranged = !isEncoded(first);
  // If-Range: the rest only if the file is still the one begun (else the host sends it whole).
  const version = first.headers.get("ETag") || first.headers.get("Last-Modified");
  /** @type {ReadableStreamDefaultReader<Uint8Array>} */
  let reader = first.body.getReader();
  let received = 0;  // bytes passed on to the consumer
  let skip = 0;  // bytes of a whole answer sent again that were passed on already
  /** @type {Uint8Array[] | null} what integrity is checked on, at the end */
  const chunks = integrity ? [] : null;

  // The rest of the file, from `received` on: a 206 continues it; a 200 starts it again.
  async function reopen() {
    const headers = new Headers(request.headers);
    if (ranged && received > 0) {
      headers.set("Range", `bytes=${received}-`);
      if (version) headers.set("If-Range", version);
    }
    attempt = watchedRequest(plainFetch, url, { ...request, headers }, patience.stallMs);
    const answer = await attempt.response;
    const start = Number((/^bytes (\d+)-/.exec(answer.headers.get("Content-Range") || "") || [])[1]);
    const now = answer.headers.get("ETag") || answer.headers.get("Last-Modified");
    /** @type {string | null} why the answer cannot continue what was passed on */
    let refused = null;
    if (!answer.body || (answer.status !== 200 && answer.status !== 206)) {
      refused = `the host answered HTTP ${answer.status} for the rest`;
    } else if (answer.status === 206 && start !== received) {
      refused = `the host sent bytes from ${start}, not ${received}`;
    } else if (answer.status === 200 && version && now && now !== version) {
      refused = "the host sent another version of the file (a new edition: reload the page)";
    }
    if (refused) {
      attempt.end();
      const failure = new DownloadFailed(url, received, total, refused);
      failed(failure);
      throw failure;
    }
    skip = answer.status === 200 ? received : 0;
    reader = /** @type {ReadableStream<Uint8Array>} */ (/** @type {unknown} */ (answer.body)).getReader();
  }

  // The next bytes of the file, from whichever answer brings them; null at its end.
  /** @returns {Promise<Uint8Array | null>} */
  async function next() {
    for (;;) {
      /** @type {unknown} */
      let broken;
      try {
        const { done, value } = await attempt.watch(reader.read());
        // (A body that ends short of its length is a dropped line too; the browser says so itself.)
        if (!done) return value;
        if (total === null || received >= total) return null;
        broken = new TypeError("the answer ended early");
      } catch (error) {
        broken = attempt.stalled() ? new Stalled() : error;
      }
      attempt.end();
      for (;;) {
        await again(broken, received, total);
        try {
          await reopen();
          break;
        } catch (error) {
          if (error instanceof DownloadFailed) throw error;
          broken = error;
        }
      }
    }
  }

  meter.open += 1;
  let open = true;
  const closed = () => {
    if (open) meter.open -= 1;
    open = false;
    attempt.end();
  };
  const body = new ReadableStream({
    async pull(controller) {
      try {
        for (;;) {
          let chunk = await next();
          if (chunk === null) {
            if (chunks && !(await matchesIntegrity(/** @type {string} */ (integrity), chunks))) {
              throw new TypeError(`${url}: its bytes do not match its integrity`);
            }
            closed();
            meter.files += 1;
            controller.close();
            return;
          }
          fruitless = 0;  // bytes flow: the download is alive
          if (skip) {  // (a whole answer again: what was passed on already is passed over)
            const over = Math.min(skip, chunk.byteLength);
            skip -= over;
            meter.resent += over;
            chunk = chunk.subarray(over);
            if (!chunk.byteLength) continue;
          }
          received += chunk.byteLength;
          meter.add(chunk.byteLength);
          if (chunks) chunks.push(chunk);
          controller.enqueue(chunk);
          return;
        }
      } catch (error) {
        closed();
        controller.error(error);
      }
    },
    cancel(reason) {
      closed();
      return reader.cancel(reason);
    },
  });
  const headers = new Headers(first.headers);
  return new Response(body, { status: first.status, statusText: first.statusText, headers });
}

// The worker's `fetch`, counting every body it answers with (see the module's comment).
// patience: how long a download may stall and how often it is tried (the tests pass their own);
// gaveUp: told of each download that gave up while online, as it does; askedFirst: a question
// the runtime's files (GZIPPED_BESIDE) wait for before they are downloaded (worker.mjs's
// runtimeKept: answered after this start's own download, it would find that download's copy).
/** @param {DownloadMeter} meter @param {typeof fetch} plainFetch @param {Partial<Patience>} [patience]
 *  @param {(failure: DownloadFailed) => void} [gaveUp] @param {Promise<unknown>} [askedFirst] */
export function countingFetch(meter, plainFetch, patience = {}, gaveUp = () => {}, askedFirst = Promise.resolve()) {
  /** @type {Map<string, Promise<Response>>} one download per URL while `shared` */
  const downloads = new Map();
  let shared = true;
  const tried = { ...PATIENCE, ...patience };
  /** @type {DownloadFailed[]} downloads that gave up while online, for worker.mjs's messages */
  const failures = [];
  /** @param {string} url @param {RequestInit} [init] */
  const resuming = (url, init) => resumingDownload(plainFetch, url, init, meter, tried, (failure) => {
    failures.push(failure);
    gaveUp(failure);
  });

  /** @param {string} url @param {RequestInit} [init] @returns {Promise<Response>} */
  async function download(url, init) {
    if (GZIPPED_BESIDE.some((pattern) => pattern.test(new URL(url).pathname))) {
      await askedFirst.catch(() => {});  // (its answer, whatever it is, comes first)
      // (Pyodide passes the lock's Subresource Integrity for the files it names: the .gz is
      // another file, checked by the WebAssembly compile instead: a corrupt file does not compile.)
      const gzipped = await resuming(url + ".gz", withoutIntegrity(init)).catch((error) => {
        if (error instanceof DownloadFailed) throw error;  // (online: the .wasm, three times its size, would fare no better)
        return null;
      });
      if (gzipped && gzipped.ok && gzipped.body) {
        const headers = new Headers(gzipped.headers);
        ["Content-Encoding", "Content-Length"].forEach((name) => headers.delete(name));
        headers.set("Content-Type", "application/wasm");  // (WebAssembly's streaming compile asks for it)
        return new Response(inflatedIfGzip(gzipped.body), { status: 200, headers });
      }
    }
    return resuming(url, init);
  }

  /** @param {RequestInfo | URL} input @param {RequestInit} [init] @returns {Promise<Response>} */
  function fetchCounted(input, init) {
    if (input instanceof Request) return plainFetch(input, init);  // (not the worker's own: none of its fetches is)
    const url = new URL(String(input), self.location.href).href;
    if (init && init.cache === "only-if-cached") return plainFetch(url, init);  // a question, not a download
    if (!shared) return download(url, init);
    if (!downloads.has(url)) downloads.set(url, download(url, init));
    // Each caller gets its own copy of the one download (a body can be read once).
    return /** @type {Promise<Response>} */ (downloads.get(url)).then((response) => response.clone());
  }

  return {
    fetch: fetchCounted,
    // One download of its own, never shared (Python's snapshot: read once, by one start).
    /** @param {string | URL} url @param {RequestInit} [init] */
    once: (url, init) => download(new URL(String(url), self.location.href).href, init),
    // Once Python is up: later fetches (packages, figures) are each their own download, and the
    // copies kept for a second start are let go.
    endSharing() {
      shared = false;
      downloads.clear();
    },
    // The downloads that gave up while online since the last call, the last one last.
    takeFailures() {
      return failures.splice(0);
    },
  };
}

/** @param {RequestInit} [init] */
function withoutIntegrity(init) {
  if (!init || !init.integrity) return init;
  const { integrity, ...rest } = init;  // eslint-disable-line no-unused-vars
  return rest;
}
