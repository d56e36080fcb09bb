"""No text shown to a person is written outside the catalogue: a scan of the code for the call sites that put
text on the screen (chat messages, actions, settings widgets, taxonomy entries, rule hints) with an English
sentence written into them, and for catalogue keys used in code that the catalogue does not have."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from chainlit_app.i18n import catalogue

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([ROOT / "app.py", *(ROOT / "chainlit_app").rglob("*.py")])
WORDS = re.compile(r"[A-Za-z]{2,}[ ,.:;!?]+[A-Za-z]{2,}")  # two English words in a row: a sentence, not an id
# Call sites that show text: the callable's name, and which arguments (position 0, keyword names) are text.
SHOWN = {
    "Message": (0, "content"), "ErrorMessage": (0, "content"), "AskUserMessage": (0, "content"),
    "say": (0, "text"), "send": (0, "content"),
    "Action": (None, "label", "tooltip"), "Slider": (None, "label", "description"),
    "TextInput": (None, "label", "description"), "Switch": (None, "label", "description"),
    "Select": (None, "label", "description"), "set_title": (0, "title"),
    "KindInfo": (1, 2, 3, "title", "explanation", "fix"), "rule": (None, "hint"), "_e": (2, "hint"),
    "RaisedInEntry": (2, "hint"), "InputTooLong": (0,), "Refused": (0,),
    "passed": (1,), "warned": (2, 3), "failed": (2, 3), "Remedy": (3, 4, "risk"), "HTTPException": ("detail",),
    "Finding": ("hint",), "StallSignal": (1,), "AnswerVerdict": (2,),
}


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _literal_text(node: ast.AST) -> str:
    """The literal parts of a str constant or f-string (placeholders left out)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp):
        return _literal_text(node.left) + " " + _literal_text(node.right)
    return ""


def _branches(node: ast.expr) -> list[ast.expr]:
    """Every value a conditional expression may take, nested conditionals included."""
    if isinstance(node, ast.IfExp):
        return _branches(node.body) + _branches(node.orelse)
    return [node]


def _calls() -> Iterator[tuple[Path, ast.Call]]:
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                yield path, node


def test_no_english_sentence_is_written_into_a_call_that_shows_text() -> None:
    offenders = []
    for path, call in _calls():
        wanted = SHOWN.get(_name(call))
        if wanted is None:
            continue
        args = [call.args[i] for i in wanted if isinstance(i, int) and i < len(call.args)]
        args += [kw.value for kw in call.keywords if kw.arg in wanted]
        for arg in args:
            text = _literal_text(arg)
            if WORDS.search(text):
                offenders.append(f"{path.relative_to(ROOT)}:{call.lineno}: {text[:60]!r}")
    assert offenders == []


# Variables that carry a text to one of those calls (a check's message and fix, a finding's hint, ...).
TEXT_VARIABLES = {"fix", "message", "hint", "notice", "what", "fallback", "unit", "note", "where"}
# English on purpose: evidence (what was observed, like a log line) and configuration errors printed at start,
# which name CHAT_* settings and stop the process before any browser is there. (answers.py's words for what
# makes an answer garbled, 'a run of <unk>', 'letters of 3 scripts', are evidence too; `_garbled_what` returns
# them rather than keeping them in a text variable, so this scan no longer meets them.)
ENGLISH_ON_PURPOSE = {
    "chainlit_app/users.py: CHAT_USERS",
}


def test_no_english_sentence_is_kept_in_a_text_variable() -> None:
    offenders = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(
                    isinstance(target, ast.Name) and target.id in TEXT_VARIABLES for target in node.targets):
                values = _branches(node.value)
                offenders += [f"{path.relative_to(ROOT)}: {_literal_text(value)[:10].strip()}" for value in values
                              if WORDS.search(_literal_text(value))]
    assert set(offenders) == ENGLISH_ON_PURPOSE


def test_the_scan_sees_what_it_looks_for() -> None:
    """The scan itself: a literal sentence in a message is found, a catalogue text is not."""
    bad = ast.parse('cl.Message(content=f"Welcome! {x} is ready.")').body[0]
    good = ast.parse('cl.Message(content=t("chat.welcome", status=x))').body[0]
    assert isinstance(bad, ast.Expr) and isinstance(good, ast.Expr)
    assert isinstance(bad.value, ast.Call) and isinstance(good.value, ast.Call)
    assert WORDS.search(_literal_text(bad.value.keywords[0].value))
    assert not WORDS.search(_literal_text(good.value.keywords[0].value))


def test_every_key_used_in_code_is_in_the_catalogue() -> None:
    keys = catalogue("en")
    used, missing = 0, []
    for path, call in _calls():
        if _name(call) in ("t", "Msg", "note") and call.args and isinstance(call.args[0], ast.Constant):
            key = str(call.args[0].value)
            key = f"note.{key}" if _name(call) == "note" and key != "unfinished" else key
            used += 1
            if key != "unfinished" and key not in keys:
                missing.append(f"{path.relative_to(ROOT)}:{call.lineno}: {key}")
    assert missing == []
    assert used > 150
