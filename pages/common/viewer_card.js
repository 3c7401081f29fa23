// The explorer's viewer card (pages/common/viewer_card.py): one element whose content is
// swapped per query. data = {html, digest, url, ahead, sent}: the card's HTML (built and escaped
// on the server), its digest, and, when not null, the view's query string, written to the
// address bar with history.replaceState (the URL sync, without a message of its own).
// ahead = {next, prev}: the cards (same shape) the navigator's "Next ▶" / "◀ Previous"
// open. At that button's click the card puts the one it opens in place at once (its
// pictures were fetched when it arrived); the rerun the button starts then confirms it
// (same digest: nothing is redrawn) or replaces it (the server's card always wins; sent
// numbers the server's cards).
const BUTTONS = { "Next ▶": "next", "◀ Previous": "prev" };

function put(root, card) {
  if (root.dataset.html !== card.digest) {
    root.innerHTML = card.html;
    root.dataset.html = card.digest;
  }
  if (typeof card.url === "string" && window.location.search !== card.url) {
    window.history.replaceState(window.history.state, "", card.url + window.location.hash);
  }
}

// Until the rerun has drawn them, what follows the card in the viewer (box picker, chips,
// "Objects by outcome", the review panel) is still the previous query's: dimmed from the
// click until the rerun that sent the next card has ended (or STALE_MS, whichever first).
const STALE_MS = 10000;

function scriptState() {
  const app = document.querySelector("[data-testid=stApp]");
  return app ? app.getAttribute("data-test-script-state") : null;
}

function dimFollowing(root) {
  const host = root.closest("[data-testid=stElementContainer]");
  for (let next = host && host.nextElementSibling; next; next = next.nextElementSibling) {
    next.dataset.ovStale = "1";
    next.style.opacity = "0.4";
  }
  root.ovPending = true; // cleared by the server's next card
  window.setTimeout(undim, STALE_MS);
}

function undim() {
  for (const el of document.querySelectorAll("[data-ov-stale]")) {
    delete el.dataset.ovStale;
    el.style.opacity = "";
  }
}

function watchRuns() {
  const app = document.querySelector("[data-testid=stApp]");
  if (!app) return;
  new MutationObserver(() => {
    const root = document.querySelector(".ov-viewer");
    if (scriptState() === "notRunning" && !(root && root.ovPending)) undim();
  }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
}

function onClick(event) {
  const button = event.target instanceof Element ? event.target.closest("button") : null;
  const slot = button && !button.disabled && BUTTONS[button.innerText.trim()];
  const root = slot && document.querySelector(".ov-viewer");
  const card = root && root.ovAhead && root.ovAhead[slot];
  if (!card) return;
  root.ovAhead = {}; // once per server card: a second click before the rerun is the server's
  put(root, card);
  dimFollowing(root);
}

// The arrow keys press the navigator's buttons ("→" Next, "←" Previous), unless the key
// is meant for what has the focus: a text field, a picker, a slider, the data grids.
const KEYS = { ArrowRight: "Next ▶", ArrowLeft: "◀ Previous" };
const OWN_KEYS = "input, textarea, select, [contenteditable], [role=slider], [role=combobox], "
  + "[role=listbox], [role=grid], [data-testid=stDataFrame], .js-plotly-plot";

function onKey(event) {
  const label = KEYS[event.key];
  if (!label || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey
      || event.defaultPrevented || !document.querySelector(".ov-viewer")) return;
  const focused = event.target instanceof Element ? event.target : null;
  if (focused && focused.closest(OWN_KEYS)) return;
  const button = [...document.querySelectorAll("[data-testid=stMain] button")]
    .find((b) => b.innerText.trim() === label);
  if (!button || button.disabled) return;
  event.preventDefault();
  button.click(); // the same click as the mouse's: the card ahead, then the rerun
}

function preload(card) {
  const urls = card.html.match(/src='[^']+'/g) || [];
  for (const attr of urls) {
    const picture = new Image();
    picture.src = attr.slice(5, -1).replace(/&amp;/g, "&");
    if (picture.decode) picture.decode().catch(() => {});
  }
}

export default function (component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(":scope > .ov-viewer");
  if (!root) {
    root = document.createElement("div");
    root.className = "ov-viewer";
    parentElement.appendChild(root);
  }
  // Only a card the server sent anew is put in place (it wins over one put in place at a
  // click); the element drawn again with the card it had leaves the shown one alone.
  if (root.dataset.sent !== String(data.sent)) {
    root.dataset.sent = String(data.sent);
    put(root, data);
    root.ovAhead = data.ahead || {}; // (a redraw does not bring back cards used at a click)
    Object.values(root.ovAhead).forEach(preload);
    root.ovPending = false; // the rerun's own card: what follows is undimmed when it ends
    if (scriptState() === "notRunning") undim();
  }
  if (!window.ovCardNavigation) {
    window.ovCardNavigation = true;
    document.addEventListener("click", onClick, true);
    document.addEventListener("keydown", onKey);
    watchRuns();
  }
}
