// Ascribe's pages work without this file; it adds the copy buttons and submits the account
// switcher on change. No inline script: the pages' Content-Security-Policy forbids it.

document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute("data-copy"));
  if (!source) return;
  const text = source.textContent || "";
  const done = () => {
    button.textContent = "Copied";
    setTimeout(() => {
      button.textContent = "Copy";
    }, 2000);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => select(source));
  } else {
    select(source);
  }
});

/** Where the clipboard is not available (plain http): select the text for the reader to copy. */
function select(node) {
  const range = document.createRange();
  range.selectNodeContents(node);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}

for (const select of document.querySelectorAll("select[data-autosubmit]")) {
  const form = select.form;
  const button = form?.querySelector("button[type=submit]");
  if (button) button.hidden = true;
  select.addEventListener("change", () => form.requestSubmit());
}
