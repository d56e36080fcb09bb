// Keeps a message too large for the socket's frame in the composer and says why, instead of sending it.
//
// The transport refuses a frame over cleaning.MAX_MESSAGE_BYTES (1 MiB): the page would silently reconnect
// and the message be lost. Before Chainlit sends (Enter without Shift in #chat-input, a click on
// #chat-submit), this script measures the text as it would travel (UTF-8 of its JSON string) and, over the
// limit, stops the event before Chainlit sees it and shows an alert next to the composer. The limit and the
// sentence come from GET /api/input-limits (the app's catalogue, in the chat's language): no words here.
(() => {
  "use strict";

  const LIMITS_PATH = "/api/input-limits";
  const INPUT_ID = "chat-input";
  const SUBMIT_ID = "chat-submit";
  const COMPOSER_ID = "message-composer";
  const ALERT_ID = "chat-input-too-large";
  const encoder = new TextEncoder();
  let limits = null;
  let loading = null;

  function loadLimits() {
    if (limits || loading) return;
    loading = fetch(LIMITS_PATH, { credentials: "same-origin" })
      .then((response) => (response.ok ? response.json() : null))
      .then((body) => {
        if (body && Number.isFinite(body.limit_bytes) && typeof body.message === "string") limits = body;
      })
      .catch(() => {})
      .finally(() => {
        loading = null;
      });
  }

  function composerText(input) {
    // A textarea in Chainlit 2.x; a contenteditable composer is read as the user sees it.
    return "value" in input && typeof input.value === "string" ? input.value : input.innerText || "";
  }

  function sentBytes(text) {
    // JSON escapes quotes, backslashes and control characters: measure what the frame will carry.
    return encoder.encode(JSON.stringify(text)).length - 2;
  }

  function alertElement() {
    return document.getElementById(ALERT_ID);
  }

  function clearAlert(input) {
    const shown = alertElement();
    if (shown) shown.remove();
    if (input && input.getAttribute("aria-describedby") === ALERT_ID) {
      input.removeAttribute("aria-describedby");
      input.removeAttribute("aria-invalid");
    }
  }

  function showAlert(input, size) {
    let box = alertElement();
    if (!box) {
      box = document.createElement("div");
      box.id = ALERT_ID;
      box.setAttribute("role", "alert");
      box.setAttribute("data-testid", "chat-input-too-large");
      box.style.cssText =
        "margin:0 0 0.5rem 0;padding:0.5rem 0.75rem;border:1px solid hsl(var(--destructive));" +
        "border-radius:0.75rem;color:hsl(var(--foreground));font-size:0.875rem;line-height:1.4;width:100%;";
      const composer = document.getElementById(COMPOSER_ID);
      const anchor = composer || input;
      anchor.parentNode.insertBefore(box, anchor);
    }
    box.dataset.size = String(size);
    box.dataset.limit = String(limits.limit_bytes);
    box.textContent = limits.message.replace("{size}", size.toLocaleString("en-US"));
    input.setAttribute("aria-describedby", ALERT_ID);
    input.setAttribute("aria-invalid", "true");
  }

  function chatInput() {
    return document.getElementById(INPUT_ID);
  }

  // Over the limit, the event is stopped here (capture phase) before Chainlit's own handlers see it.
  function guard(event) {
    const input = chatInput();
    if (!input) return;
    if (!limits) {
      loadLimits();
      return;
    }
    const size = sentBytes(composerText(input));
    if (size <= limits.limit_bytes) {
      clearAlert(input);
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    showAlert(input, size);
  }

  window.addEventListener(
    "keydown",
    (event) => {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
      if (!(event.target instanceof Element) || event.target.id !== INPUT_ID) return;
      guard(event);
    },
    true,
  );

  window.addEventListener(
    "click",
    (event) => {
      if (!(event.target instanceof Element) || !event.target.closest("#" + SUBMIT_ID)) return;
      guard(event);
    },
    true,
  );

  window.addEventListener(
    "input",
    (event) => {
      if (!alertElement() || !(event.target instanceof Element) || event.target.id !== INPUT_ID) return;
      if (limits && sentBytes(composerText(event.target)) <= limits.limit_bytes) clearAlert(event.target);
    },
    true,
  );

  loadLimits();
})();
