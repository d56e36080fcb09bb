"""Rules that read the `type` an error body gives itself, where its message alone is a server's own wording.

- An error body whose type names authentication (`"type": "authentication_error"`, Anthropic's and its
  proxies' shape, LibreChat #4154 printed it pretty beside `"message": "invalid x-api-key"`) is auth, whatever
  the message says and however the body is printed (one line or one field per line). The key header's name
  (`x-api-key`) between 'invalid' and the key is read as the key too.

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

BODY_TYPE_RULES: tuple[Rule, ...] = (
    rule(
        "error_body_type_authentication",
        Kind.AUTH,
        r"[\"']type[\"']\s*:\s*[\"']\w*authentication\w*[\"']|\binvalid x-api[ _-]?key\b",
        hint=Msg("rule.unauthorized"),
        examples=(
            '        "type": "authentication_error"',  # LibreChat #4154, one field per line
            '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
            '        "message": "invalid x-api-key",',
        ),
    ),
)
