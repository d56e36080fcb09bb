"""What a failed chat request means, in one short sentence a user can act on."""

from __future__ import annotations

import httpx
import openai


def _body_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        if isinstance(message, dict):
            message = message.get("message", message)
        return str(message)
    return str(body or exc.message)


def explain(exc: BaseException, is_admin: bool) -> str:
    """A short, clear message for the chat; admins are pointed to the diagnostics panel."""
    where = " Open the diagnostics panel for the evidence and the fix." if is_admin else (
        " If it keeps happening, tell the administrator."
    )
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
        return "The model server did not answer in time." + where
    if isinstance(exc, openai.APIConnectionError | httpx.TransportError | ConnectionError):
        return "The model server cannot be reached (it may have crashed or be restarting)." + where
    if isinstance(exc, openai.AuthenticationError):
        return "The model server refused the API key (401)." + where
    if isinstance(exc, openai.NotFoundError):
        return f"The model server does not know this model (404): {_body_text(exc)[:200]}" + where
    if isinstance(exc, openai.BadRequestError):
        text = _body_text(exc)
        if "context length" in text or "max_model_len" in text:
            return ("The conversation is longer than the model's context, even after leaving out old turns. "
                    "Start a new chat or shorten the message.")
        if "chat template" in text:
            return "The model has no chat template, so it cannot chat (400)." + where
        return f"The model server rejected the request (400): {text[:200]}"
    if isinstance(exc, openai.APIStatusError):
        return f"The model server failed with HTTP {exc.status_code}." + where
    if isinstance(exc, openai.APIError):
        return f"The model server stopped the answer: {str(exc)[:200]}." + where
    return f"Something went wrong while answering ({type(exc).__name__})." + where
