"""The catalogue: every key in English and Simplified Chinese with the same placeholders, every kind and rule
hint present in both, the terms Chinese vLLM users use, the guides' wrong claims never repeated as advice,
and the language choice (browser tag, CHAT_LANGUAGE, locale)."""

from __future__ import annotations

import copy
import pickle
import re

import httpx2 as httpx  # the HTTP client package openai 3 is built on
import openai
import pytest

from chainlit_app import i18n
from chainlit_app.conversation import note, with_note, without_notes
from chainlit_app.diagnostics import exceptions
from chainlit_app.diagnostics.findings import Finding
from chainlit_app.diagnostics.rule_tables import RULES
from chainlit_app.diagnostics.store import FindingsStore
from chainlit_app.diagnostics.taxonomy import KINDS, Kind
from chainlit_app.failures import explain
from chainlit_app.i18n import Msg, catalogue, localize, placeholders, t, use_language

EN = catalogue("en")
ZH = catalogue("zh-CN")
CJK = re.compile(r"[\u4e00-\u9fff]")
# Texts without Chinese words on purpose: symbols or punctuation around placeholders, a parameter's or a
# package's own name, data only (a doctor line that is names and numbers).
SAME_IN_BOTH = {"settings.top_p", "chat.gave_up_message", "chat.failure", "doctor.dtype.pass.1",
                "doctor.transformers.pass.1", "doctor.list"}
SAME_ON_PURPOSE = SAME_IN_BOTH | {"fail.status", "fail.sentence", "hint.with_detail", "doctor.config.pass.1",
                                  "doctor.tokenizer.msg.1", "doctor.eos.fixes", "list.separator"}


def test_every_key_has_both_languages_with_the_same_placeholders() -> None:
    assert EN.keys() == ZH.keys(), sorted(EN.keys() ^ ZH.keys())
    assert len(EN) > 250
    for key in EN:
        assert EN[key].strip() and ZH[key].strip(), key
        assert placeholders(EN[key]) == placeholders(ZH[key]), key
        t(key, "en", **{name: "x" for name in placeholders(EN[key])})  # both templates format
        t(key, "zh-CN", **{name: "x" for name in placeholders(ZH[key])})


def test_chinese_texts_are_chinese() -> None:
    not_chinese = [key for key in ZH if key not in SAME_ON_PURPOSE and not CJK.search(ZH[key])]
    assert not_chinese == []
    assert {key for key in ZH if ZH[key] == EN[key]} == SAME_IN_BOTH


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_has_title_explanation_and_fix_in_both(kind: Kind) -> None:
    info = KINDS[kind]
    for language in i18n.LANGUAGES:
        with use_language(language):
            assert info.title and info.explanation and len(info.fix) >= 3
            assert all(step for step in info.fix)
    with use_language("zh-CN"):
        assert CJK.search(info.title) and all(CJK.search(step) for step in info.fix)
    with use_language("en"):
        assert not CJK.search(info.title + info.explanation + "".join(info.fix))


def test_every_rule_and_exception_hint_comes_from_the_catalogue() -> None:
    hints = [(r.id, r.hint) for r in RULES] + [(sorted(e.names)[0], e.hint) for e in exceptions.EXCEPTIONS] + [
        (e.fragments[0], e.hint) for e in exceptions.RAISED_IN]
    assert len(hints) > 90
    for name, hint in hints:
        assert isinstance(hint, Msg), name
        assert CJK.search(hint.render("zh-CN")), name
        assert str(hint) == EN[hint.key]  # the value (logs, old readers) is the English text


def test_terms_chinese_vllm_users_use() -> None:
    chinese = "\n".join(ZH.values())
    terms = ("显存", "KV 缓存", "上下文长度", "端口被占用", "对话模板", "模型名称",
             "鉴权", "API 密钥", "乱码", "空回复", "启动失败")
    for term in terms:
        assert term in chinese, term


# The field guides' wrong claims (seeds/CORRECTIONS.md): they may be named only to say they are wrong.
WRONG_CLAIMS = ("--enable-moe", "paddle2hf", "<|endoftext|>", "ErnieModel", "vllm==0.6.3", "50051", "MoE")


def test_the_guides_wrong_claims_are_only_named_to_correct_them() -> None:
    for key, text in ZH.items():
        for claim in WRONG_CLAIMS:
            for match in re.finditer(re.escape(claim), text):
                before = text[max(0, match.start() - 24):match.start()]
                assert re.search("不是|不需要|没有|不要|并没有", before), (key, claim, before)


@pytest.mark.parametrize(("tag", "language"), [
    ("zh-CN", "zh-CN"), ("zh", "zh-CN"), ("zh-Hans", "zh-CN"), ("zh-Hans-CN", "zh-CN"), ("zh_CN.UTF-8", "zh-CN"),
    ("zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"), ("zh-TW", "en"), ("zh-Hant", "en"), ("en-US", "en"), ("fr", "en"),
    ("", "en"), (None, "en"),
])
def test_browser_tags(tag: str | None, language: str) -> None:
    assert i18n.pick(tag) == language


def test_chat_language_setting_overrides_the_browser() -> None:
    assert i18n.choose("auto", "zh-CN") == "zh-CN"
    assert i18n.choose("en", "zh-CN") == "en"
    assert i18n.choose("zh-CN", "en-US") == "zh-CN"


def test_cli_default_follows_the_locale() -> None:
    assert i18n.from_environment({"LANG": "zh_CN.UTF-8"}) == "zh-CN"
    assert i18n.from_environment({"LANGUAGE": "en_US:zh_CN", "LANG": "zh_CN.UTF-8"}) == "en"
    assert i18n.from_environment({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}) == "zh-CN"
    assert i18n.from_environment({}) == "en"


def test_a_stored_text_is_shown_again_in_the_readers_language() -> None:
    hint = Msg("progress.connecting", url="http://127.0.0.1:8000")
    assert hint == "connecting to http://127.0.0.1:8000"
    assert localize(hint, "zh-CN") == "正在连接 http://127.0.0.1:8000"
    assert localize(copy.deepcopy(hint), "zh-CN") == localize(pickle.loads(pickle.dumps(hint)), "zh-CN")
    assert localize(EN["rule.port_in_use"], "zh-CN") == ZH["rule.port_in_use"]  # plain English copy
    assert localize("ERROR: evidence line", "zh-CN") == "ERROR: evidence line"  # not ours: as it is


def test_the_panel_store_gives_texts_in_the_current_language() -> None:
    store = FindingsStore()
    rule = next(r for r in RULES if r.id == "port_in_use")
    store.add(Finding(kind="port_in_use", line=3, text="OSError: [Errno 98] Address already in use", hint=rule.hint))
    with use_language("zh-CN"):
        entry = store.snapshot()[0]
    assert entry["kind"] == "port_in_use" and entry["title"] == "端口被占用"
    assert entry["hint"] == ZH["rule.port_in_use"] and CJK.search(entry["fix"][0])
    assert entry["evidence"][0]["text"] == "OSError: [Errno 98] Address already in use"  # log lines unchanged
    with use_language("en"):
        assert store.snapshot()[0]["title"] == "Port already in use"


def test_a_failed_chat_request_is_explained_in_chinese() -> None:
    exc = openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions"))
    with use_language("zh-CN"):
        text = explain(exc, is_admin=True)
    assert text.startswith("连接不上模型服务") and "诊断面板" in text
    with use_language("en"):
        assert explain(exc, is_admin=False).startswith("The model server cannot be reached")


def test_notes_in_either_language_are_stripped_from_history() -> None:
    for language in i18n.LANGUAGES:
        with use_language(language):
            shown = with_note(with_note("answer", note("cut")), note("interrupted", reason="x"))
            assert without_notes(shown) == "answer"
            assert without_notes(note("empty", finish_reason="stop", tokens=0)) == ""
