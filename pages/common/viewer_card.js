// The explorer's viewer card (pages/common/viewer_card.py): one element whose content is
// swapped per query. data = {html, digest, url, ahead, sent, host, pictures}: the card's
// HTML (built and escaped on the server, the navigator's buttons in it), its digest, and,
// when not null, the view's query string, written to the address bar with
// history.replaceState (the URL sync, without a message of its own).
// ahead = {next, prev}: the cards (same shape) the navigator's "Next ▶" / "◀ Previous"
// open. At that button's click the card puts the one it opens in place at once (its
// pictures were decoded when they arrived), then reports the click (the trigger "nav");
// the rerun it starts confirms the card (same digest: nothing is redrawn) or replaces it
// (the server's card always wins; sent numbers the server's cards).
// Pictures: the HTML names each by its digest (data-pic); pictures = an Arrow table
// (digest, jpeg) of the ones not sent to this page before, kept here as Blob URLs.
// The card is the last element its run sends (viewer_card.slot: its place is made before
// what follows it, filled last): a new card from the server means that run has drawn
// everything after the card.

const PICTURES = window.ovCardPictures || (window.ovCardPictures = new Map());
const PICTURES_MAX = 32; // twice the server's HELD_MAX: it holds every one the server thinks
const PIC = /data-pic='([0-9a-f]+)'/g;

function named(html) {
  return [...html.matchAll(PIC)].map((m) => m[1]);
}

function complete(card) {
  return named(card.html).every((digest) => PICTURES.has(digest));
}

// Each new picture becomes an image of a Blob URL, decoded now (off the main thread), not
// at the swap.
function receive(table) {
  if (!table || !table.numRows) return;
  const digests = table.getChild("digest");
  const jpegs = table.getChild("jpeg");
  for (let i = 0; i < table.numRows; i++) {
    const digest = String(digests.get(i));
    if (PICTURES.has(digest)) continue;
    const url = URL.createObjectURL(new Blob([jpegs.get(i)], { type: "image/jpeg" }));
    const picture = new Image();
    picture.src = url;
    if (picture.decode) picture.decode().catch(() => {});
    PICTURES.set(digest, { url, picture });
  }
}

// Used in the order the server marks them (least recently used are dropped first).
function touch(used) {
  for (const digest of used) {
    const entry = PICTURES.get(digest);
    if (entry) {
      PICTURES.delete(digest);
      PICTURES.set(digest, entry);
    }
  }
  for (const [digest, entry] of PICTURES) {
    if (PICTURES.size <= PICTURES_MAX) break;
    if (used.includes(digest)) continue;
    URL.revokeObjectURL(entry.url);
    PICTURES.delete(digest);
  }
}

// The card's <img data-pic> are placeholders: each is replaced by the picture's own
// element, loaded and decoded already (a new <img> of a Blob URL would load it again,
// and show it a frame or two later). A picture is in one place at a time: in one card.
function place(root) {
  for (const slot of root.querySelectorAll("img[data-pic]")) {
    const entry = PICTURES.get(slot.dataset.pic);
    if (!entry) continue;
    // (the same picture twice in one card: a copy for the second)
    const picture = entry.picture.isConnected ? entry.picture.cloneNode() : entry.picture;
    for (const name of picture.getAttributeNames()) {
      if (name !== "src") picture.removeAttribute(name);
    }
    for (const { name, value } of slot.attributes) picture.setAttribute(name, value);
    slot.replaceWith(picture);
  }
}

function put(root, card) {
  const done = complete(card) ? card.digest : "";
  if (!done || root.dataset.html !== done) {
    const focused = document.activeElement;
    const go = focused && root.contains(focused) ? focused.dataset.go : undefined;
    root.innerHTML = card.html;
    place(root);
    root.dataset.html = done; // a card shown without a picture is drawn again
    if (go) root.querySelector(`button[data-go=${go}]`)?.focus(); // the key stays there
  }
  if (typeof card.url === "string" && window.location.search !== card.url) {
    window.history.replaceState(window.history.state, "", card.url + window.location.hash);
  }
}

// Until the rerun has drawn them, what follows the card in the viewer (box picker, chips,
// "Objects by outcome", the review panel) is still the previous query's: dimmed from the
// click until the rerun that sent the next card has ended (that card arrived), or
// STALE_MS, whichever first. The card's place (viewer_card.slot) is the element of class
// st-key-<its key>: what follows it is dimmed.
const STALE_MS = 10000;

function dimFollowing(root) {
  let host = root.dataset.host ? root.closest(`.${CSS.escape(root.dataset.host)}`) : null;
  // (a container is drawn inside a wrapper of its own: then what follows is the wrapper's)
  if (host && !host.nextElementSibling && host.parentElement?.childElementCount === 1) {
    host = host.parentElement;
  }
  for (let next = host && host.nextElementSibling; next; next = next.nextElementSibling) {
    next.dataset.ovStale = "1";
    next.style.opacity = "0.4";
  }
  root.ovClickSent = root.dataset.sent; // the rerun's own card comes after this one
  window.setTimeout(undim, STALE_MS);
}

function undim() {
  for (const el of document.querySelectorAll("[data-ov-stale]")) {
    delete el.dataset.ovStale;
    el.style.opacity = "";
  }
}

function settle(root) {
  if (root.dataset.sent !== root.ovClickSent) undim();
}

function go(root, slot) {
  const card = root.ovAhead && root.ovAhead[slot];
  if (card && complete(card)) {
    root.ovAhead = {}; // once per server card: a second click before the rerun is the server's
    put(root, card);
    dimFollowing(root);
  }
  root.ovTrigger("nav", slot); // the rerun: the server selects the query and sends its card
}

function onClick(event) {
  const root = event.currentTarget;
  const button = event.target instanceof Element ? event.target.closest("button[data-go]") : null;
  if (button && !button.disabled && root.contains(button)) go(root, button.dataset.go);
}

// The arrow keys press the navigator's buttons (→ Next, ← Previous; with Shift the error
// navigator's, Next error / Previous error), unless the key is meant for what has the
// focus: a text field, a picker, a slider, a data grid, a figure.
const KEYS = { ArrowRight: "next", ArrowLeft: "prev" };
const SHIFT_KEYS = { ArrowRight: "next_err", ArrowLeft: "prev_err" };
const OWN_KEYS = "input, textarea, select, [contenteditable], [role=slider], [role=combobox], "
  + "[role=listbox], [role=grid], canvas, .js-plotly-plot";

function onKey(event) {
  const slot = (event.shiftKey ? SHIFT_KEYS : KEYS)[event.key];
  if (!slot || event.altKey || event.ctrlKey || event.metaKey || event.defaultPrevented) return;
  const root = document.querySelector(".ov-viewer");
  const focused = event.target instanceof Element ? event.target : null;
  if (!root || (focused && focused.closest(OWN_KEYS))) return;
  const button = root.querySelector(`button[data-go=${slot}]`);
  if (!button || button.disabled) return;
  event.preventDefault();
  button.click(); // the same click as the mouse's: the card ahead, then the rerun
}

// A picture the card names that this page lacks (a message lost to a rerun that cut the
// one before): the server is asked to send every picture again (at most every 5 s).
function missing(root) {
  const now = Date.now();
  if (now - (window.ovMissingAt || 0) < 5000) return;
  window.ovMissingAt = now;
  root.ovTrigger("missing", true);
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(":scope > .ov-viewer");
  if (!root) {
    root = document.createElement("div");
    root.className = "ov-viewer";
    root.addEventListener("click", onClick);
    parentElement.appendChild(root);
  }
  root.ovTrigger = setTriggerValue;
  // Only a card the server sent anew is put in place (it wins over one put in place at a
  // click); the element drawn again with the card it had leaves the shown one alone.
  if (root.dataset.sent !== String(data.sent)) {
    root.dataset.sent = String(data.sent);
    root.dataset.host = data.host || "";
    receive(data.pictures);
    const ahead = data.ahead || {};
    touch([data, ...Object.values(ahead)].flatMap((card) => named(card.html)));
    put(root, data);
    // (a redraw does not bring back cards used at a click; none that lacks a picture)
    root.ovAhead = Object.fromEntries(Object.entries(ahead).filter(([, c]) => complete(c)));
    if (!complete(data)) missing(root);
    settle(root);
  }
  if (!window.ovCardNavigation) {
    window.ovCardNavigation = true;
    document.addEventListener("keydown", onKey);
  }
}
