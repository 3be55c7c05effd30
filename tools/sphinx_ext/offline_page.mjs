/* Every page of the HTML book: registers the book's service worker (sw.js, at the site's root;
   tools/sphinx_ext/offline.py says what it keeps) and says when a new edition is ready.

   <html data-offline> tells the tests where things stand: "unavailable" (no service worker:
   a file:// page, a browser or a private window that refuses one; the book works online as
   before), "ready" (this edition is kept for offline use), "update" (a new edition is kept and
   waits for the reader's word). */
const root = document.documentElement;

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

async function register() {
  if (!("serviceWorker" in navigator) || !location.protocol.startsWith("http")) return say("unavailable");
  const siteRoot = new URL(root.dataset.content_root || "./", location.href);
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
  });
  if (registration.waiting && hasEdition()) offerNewEdition(registration.waiting);
  else if (registration.installing) watch(registration.installing);
  else if (registration.active) say("ready");
  registration.addEventListener("updatefound", () => watch(registration.installing));
  // A page left open for hours still hears of a new edition, and when the network returns.
  setInterval(() => registration.update().catch(() => {}), 60 * 60 * 1000);
  window.addEventListener("online", () => registration.update().catch(() => {}));
}

register();
