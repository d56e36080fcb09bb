"""The app's texts in English and Simplified Chinese, from one gettext catalogue per language.

The catalogues are the .po files under `locales/` (keys as msgids), read at run time with Babel so that a
clean clone needs no build step. A text shown to a person is `t(key, **placeholders)`; a text that is
stored first and shown later (a finding's hint, a check's fix) is a `Msg`: a str whose value is the English
text (logs, --json, older readers) and which can be shown again in any language with `localize`.
The language of the current request or chat session lives in a context variable (`use_language`), so
code that builds texts does not pass it around. Log lines, flags and setting names are never translated.
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Literal

from babel.messages.pofile import read_po

Language = Literal["en", "zh-CN"]
LANGUAGES: tuple[Language, ...] = ("en", "zh-CN")
DEFAULT: Language = "en"
LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"
_FOLDERS: dict[Language, str] = {"en": "en", "zh-CN": "zh_CN"}
# Simplified Chinese tags (BCP 47 and POSIX spellings); Traditional (zh-TW, zh-HK, zh-Hant) gets English.
_SIMPLIFIED = ("zh", "zh-cn", "zh-hans", "zh-sg", "zh-my")

_current: ContextVar[Language] = ContextVar("chat_language", default=DEFAULT)


def pick(tag: str | None) -> Language:
    """A browser's or locale's language tag -> the language the app speaks ('zh-CN' or 'en')."""
    if not tag:
        return DEFAULT
    tag = tag.split(",")[0].split(";")[0].split(".")[0].split("@")[0].strip().replace("_", "-").lower()
    if tag in _SIMPLIFIED or tag.startswith(("zh-hans-", "zh-cn-")):
        return "zh-CN"
    return DEFAULT


def choose(setting: str, browser: str | None) -> Language:
    """CHAT_LANGUAGE wins unless it is 'auto'; then the browser's language decides."""
    return pick(setting) if setting and setting != "auto" else pick(browser)


def for_request(asked: str | None, setting: str, accept_language: str | None) -> Language:
    """An HTTP API's language (the panel's, the remedy routes'): `?lang=`, else CHAT_LANGUAGE, else the
    browser's Accept-Language, so the panel follows the chat."""
    return pick(asked) if asked else choose(setting, accept_language)


def from_environment(environ: Mapping[str, str] | None = None) -> Language:
    """The CLIs' default: the POSIX locale variables in their order of precedence (LANGUAGE first)."""
    env = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "").split(":")[0]
        if value and value not in ("C", "POSIX") and not value.startswith("C."):
            return pick(value)
    return DEFAULT


def current() -> Language:
    return _current.get()


def set_language(language: Language) -> None:
    """Set the language of the running task (a Chainlit hook, a request handler, a CLI run)."""
    _current.set(language)


@contextmanager
def use_language(language: Language) -> Iterator[None]:
    token = _current.set(language)
    try:
        yield
    finally:
        _current.reset(token)


@cache
def catalogue(language: Language) -> dict[str, str]:
    """Key -> text of one language, read from its .po file once per process."""
    path = LOCALES_DIR / _FOLDERS[language] / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as handle:
        po = read_po(handle, locale=_FOLDERS[language])
    return {str(m.id): str(m.string) for m in po if m.id and isinstance(m.id, str) and m.string}


def has(key: str) -> bool:
    return key in catalogue(DEFAULT)


def placeholders(text: str) -> set[str]:
    """The named fields of a text ('{port}' -> {'port'})."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def t(key: str, language: Language | None = None, **values: Any) -> str:
    """The text of `key` in `language` (default: the current one), placeholders filled. A key missing in
    a language falls back to English; a key missing everywhere is a bug and raises KeyError."""
    texts = catalogue(language or _current.get())
    template = texts.get(key) or catalogue(DEFAULT)[key]
    return template.format(**values)


class Msg(str):
    """A text kept for later: its value is the English text, `key`/`values` render it in any language."""

    key: str
    values: dict[str, Any]

    def __new__(cls, key: str, **values: Any) -> Msg:
        obj = super().__new__(cls, t(key, DEFAULT, **{k: _value(v, DEFAULT) for k, v in values.items()}))
        obj.key = key
        obj.values = values
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.key, self.values))

    def render(self, language: Language | None = None) -> str:
        return t(self.key, language, **{k: _value(v, language) for k, v in self.values.items()})


def _value(value: Any, language: Language | None) -> Any:
    """A placeholder's value in `language`; a list of texts (problems, fixes) joined with its separator."""
    if isinstance(value, list) and value and all(isinstance(item, Msg) for item in value):
        return t("list.separator", language).join(item.render(language) for item in value)
    return localize(value, language)


def _rebuild(key: str, values: dict[str, Any]) -> Msg:
    return Msg(key, **values)


@lru_cache(maxsize=1)
def _english_index() -> dict[str, str]:
    """English text -> key, for texts without placeholders that reach an output as plain str (copied
    through JSON, say): they are still shown in the reader's language."""
    return {text: key for key, text in catalogue(DEFAULT).items() if not placeholders(text)}


def localize(text: Any, language: Language | None = None) -> Any:
    """A stored text in `language`: a Msg is rendered again, a plain English catalogue text is looked
    up, anything else (evidence lines, names, numbers) is returned unchanged."""
    if isinstance(text, Msg):
        return text.render(language)
    if isinstance(text, str) and (key := _english_index().get(text)):
        return t(key, language)
    if isinstance(text, list | tuple):
        return [localize(item, language) for item in text]
    return text
