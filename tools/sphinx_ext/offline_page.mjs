/* Every page of the HTML book: registers the book's service worker (sw.js, at the site's root;
   tools/sphinx_ext/offline.py says what it keeps) and says when a new edition is ready.

   <html data-offline> tells the tests where things stand: "unavailable" (no service worker:
   a file:// page, a browser or a private window that refuses one; the book works online as
   before), "ready" (this edition is kept for offline use), "update" (a new edition is kept and
   waits for the reader's word). */
const root = document.documentElement;

const siteRoot = new URL(root.dataset.content_root || "./", location.href);  // the worker's scope

function say(state) { root.dataset.offline = state; }

/* The notice of a new edition: it reloads into it only when the reader asks. Kept edits and
   progress live in localStorage, which neither the worker nor the reload touch. */
function offerNewEdition(waiting) {
  if (document.querySelector(".offline-new-edition")) return;
  say("update");
  const notice = document.createElement("div");
  notice.className = "offline-new-edition";
  notice.setAttribute("role", "status");
  // At the top (the runner's Stop bar takes the bottom), in the theme's colours; styled here so
  // the page's one stylesheet stays what every page loads.
  Object.assign(notice.style, {
    position: "fixed", top: "0.5rem", left: "50%", transform: "translateX(-50%)", zIndex: "2000",
    maxWidth: "calc(100vw - 1rem)", padding: "0.5rem 0.75rem", borderRadius: "0.375rem",
    background: "var(--pst-color-surface)", color: "var(--pst-color-text-base)",
    border: "1px solid var(--pst-color-border)", boxShadow: "0 2px 8px rgba(0, 0, 0, 0.25)",
  });
  const text = document.createElement("span");
  text.textContent = "A new edition of this book is available. Your edits are kept. ";
  const reload = document.createElement("button");
  reload.type = "button";
  reload.className = "btn btn-sm btn-primary";
  reload.textContent = "Open the new edition";
  reload.addEventListener("click", () => {
    navigator.serviceWorker.addEventListener("controllerchange", () => location.reload());
    waiting.postMessage("take-new-edition");
  });
  notice.append(text, reload);
  document.body.append(notice);
}

/* Honest about storage: a line in the page's footer says what this browser keeps for the
   book and offers to remove it (the book then works online as before, until a later visit
   keeps it again); a browser that refused to store it is said once, the same way. */
function footerLine(...parts) {
  const footer = document.querySelector(".bd-footer-content__inner") || document.body;
  let line = document.querySelector(".offline-storage");
  if (!line) {
    line = document.createElement("p");
    line.className = "offline-storage";
    line.setAttribute("role", "status");
    footer.append(line);
  }
  line.replaceChildren(...parts);
}

async function sayWhatIsKept() {
  const { usage } = navigator.storage && navigator.storage.estimate ? await navigator.storage.estimate() : {};
  if (!usage) return;
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "btn btn-sm btn-outline-secondary";
  remove.textContent = "Remove the offline copy";
  remove.addEventListener("click", async () => {
    // Only this book's (other sites may share the origin, as on owner.github.io).
    const registration = await navigator.serviceWorker.getRegistration(siteRoot.href);
    if (registration) await registration.unregister();
    await caches.delete(`book-offline:${siteRoot.pathname}`);
    say("removed");
    footerLine("The offline copy is removed; the book works online as before (a later visit keeps it again).");
  });
  footerLine(`This book is kept in this browser for offline use (${(usage / 1e6).toFixed(1)} MB). `, remove);
}

function sayNotKept() {
  say("unavailable");
  footerLine("This browser did not let the book keep an offline copy; it works online as before.");
}

async function register() {
  if (!("serviceWorker" in navigator) || !location.protocol.startsWith("http")) return say("unavailable");
  let registration;
  try {
    registration = await navigator.serviceWorker.register(new URL("sw.js", siteRoot).href);
  } catch (error) {
    return say("unavailable");  // refused (private window, blocked, quota): online as before
  }
  if (!registration) return say("unavailable");  // (a blocked registration that still resolves)
  const hasEdition = () => navigator.serviceWorker.controller !== null;
  const watch = (worker) => worker.addEventListener("statechange", () => {
    if (worker.state === "installed" && hasEdition()) offerNewEdition(worker);
    if (worker.state === "activated" && root.dataset.offline !== "update") say("ready");
    if (worker.state === "activated") sayWhatIsKept();
    if (worker.state === "redundant" && !registration.active) sayNotKept();  // install failed (quota)
  });
  if (registration.waiting && hasEdition()) offerNewEdition(registration.waiting);
  else if (registration.installing) watch(registration.installing);
  else if (registration.active) {
    say("ready");
    sayWhatIsKept();
  }
  registration.addEventListener("updatefound", () => watch(registration.installing));
  // A page left open for hours still hears of a new edition, and when the network returns.
  setInterval(() => registration.update().catch(() => {}), 60 * 60 * 1000);
  window.addEventListener("online", () => registration.update().catch(() => {}));
}

register();
