import { useLayoutEffect, useRef } from "react";

// The chat's own notices (welcome, start-up progress, demo-model notice, failures, Retry) are Chainlit
// messages, and Chainlit lets no attribute of ours onto a message. This invisible element is sent with a
// notice and puts the notice's stable hooks on the message it belongs to: data-testid, data-kind,
// data-state, a role, and the test ids of the message's own buttons (Chainlit renders an action with
// id={action.id}; the app chooses those ids). Nothing here depends on the display language. The model's
// answers get one too (chat-answer), so a script tells an answer from a notice without reading it; once
// an answer is complete, the app updates this element's props (data-done, and data-failure or
// data-stopped). A layout effect: the hooks are on the page in the same frame as the change.
// The hooks are a supported interface for scripts (README, "Scripted UI tests").
export default function ChatNotice() {
  const marker = useRef(null);
  const testid = props.testid;
  const attributes = props.attributes || {};
  const buttons = props.buttons || {};
  const role = props.role || null;

  useLayoutEffect(() => {
    const message = marker.current ? marker.current.closest(".ai-message") : null;
    if (!message) return undefined;
    const tag = () => {
      if (testid) message.setAttribute("data-testid", testid);
      if (role) message.setAttribute("role", role);
      for (const [name, value] of Object.entries(attributes)) message.setAttribute(`data-${name}`, String(value));
      for (const [id, buttonTestid] of Object.entries(buttons)) {
        const button = document.getElementById(id);
        if (button && message.contains(button)) button.setAttribute("data-testid", buttonTestid);
      }
    };
    tag();
    // The message's buttons appear when its streaming ends, and may be drawn again: tag them each time.
    const observer = new MutationObserver(tag);
    observer.observe(message, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [testid, role, JSON.stringify(attributes), JSON.stringify(buttons)]);

  return <span ref={marker} hidden data-testid="chat-notice-marker" />;
}
