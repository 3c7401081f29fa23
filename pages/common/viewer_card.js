// The explorer's viewer card (pages/common/viewer_card.py): one element whose content is
// swapped per query. data = {html, url}: the card's HTML (built and escaped on the
// server) and, when not null, the view's query string, written to the address bar with
// history.replaceState (the URL sync, without a message of its own).
export default function (component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(":scope > .ov-viewer");
  if (!root) {
    root = document.createElement("div");
    root.className = "ov-viewer";
    parentElement.appendChild(root);
  }
  if (root.dataset.html !== data.digest) {
    root.innerHTML = data.html;
    root.dataset.html = data.digest;
  }
  if (typeof data.url === "string" && window.location.search !== data.url) {
    window.history.replaceState(window.history.state, "", data.url + window.location.hash);
  }
}
