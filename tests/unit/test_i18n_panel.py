"""The diagnostics panel and what it shows in the reader's language (issue 15, phase 2): the panel's own words
come from the catalogue (`panel.ui.*`, sent as `labels`), Diagnostics.jsx writes no English sentence of
its own, and the texts the server builds for it (remedy refusals, automatic-mode notices, a launch's exit
cause) are said again in Chinese, also after a restart of the app (the records are read back from disk)."""

from __future__ import annotations

import json
import re
import signal
import typing
from pathlib import Path

from chainlit_app import i18n
from chainlit_app.diagnostics.findings import Source
from chainlit_app.diagnostics.taxonomy import Severity
from chainlit_app.engine.launch_records import LaunchRecords, cause_parts
from chainlit_app.engine.status import EngineState
from chainlit_app.i18n import Msg, use_language
from chainlit_app.panel import LABEL_PREFIX, panel_labels
from chainlit_app.remedy_desk import RemedyRefused
from chainlit_app.remedy_routes import _refused

ROOT = Path(__file__).resolve().parents[2]
PANEL = (ROOT / "public" / "elements" / "Diagnostics.jsx").read_text(encoding="utf-8")
CJK = re.compile(r"[\u4e00-\u9fff]")
WORDS = re.compile(r"[A-Za-z]{2,}[ ,.:;!?]+[A-Za-z]{2,}")
CODE = re.sub(r"^\s*//.*$", "", PANEL, flags=re.MULTILINE)  # comments are for developers
# The words the panel looks up: text("key"), text(cond ? "a" : "b"), text.nodes("key"), { key: "key" }.
USED = set(re.findall(r"text(?:\.nodes)?\(\s*\"([a-z_.]+)\"", CODE))
USED |= {k for pair in re.findall(r"text\([^(),]*?\?\s*\"([a-z_.]+)\"\s*:\s*\"([a-z_.]+)\"", CODE) for k in pair}
USED |= set(re.findall(r"\bkey: \"([a-z_.]+)\"", CODE))
# Looked up by a value: `state.${engine.state}`, `severity.${f.severity}`, `basis.${...}`, `source.${...}`.
PREFIXED = {"state": [s.value for s in EngineState], "severity": list(typing.get_args(Severity)),
            "basis": ["rule", "exception_type", "raised_in", "phase"], "source": list(typing.get_args(Source))}


def test_the_panel_gets_its_words_in_both_languages() -> None:
    english, chinese = panel_labels("en"), panel_labels("zh-CN")
    assert set(english) == set(chinese) and len(english) > 100
    assert english["apply_fix"] == "Apply fix" and chinese["apply_fix"] == "应用修复"
    assert chinese["undo"] == "撤销" and chinese["overrides"] == "覆盖项" and chinese["metric.kv_cache"] == "KV 缓存"
    assert all(CJK.search(text) for key, text in chinese.items() if key != "launch_when")  # "{when}："
    with use_language("zh-CN"):
        assert panel_labels() == chinese  # the element's props: the chat session's language


def test_every_word_the_panel_looks_up_is_in_the_catalogue_and_every_label_is_used() -> None:
    labels = panel_labels("en")
    prefixed = {f"{prefix}.{value}" for prefix, values in PREFIXED.items() for value in values}
    assert USED - set(labels) == set()
    assert prefixed - set(labels) == set(), "a state, severity, basis or source the panel would show raw"
    for prefix in PREFIXED:
        assert f"`{prefix}.${{" in CODE, prefix  # the lookup the PREFIXED table stands for
    assert set(labels) - USED - prefixed == set(), "a label nothing shows"


def test_the_panel_writes_no_english_sentence_of_its_own() -> None:
    """JSX text between tags, the attributes a person or a screen reader meets, and the messages it sets."""
    texts = re.findall(r">([^<>{}();=]+)<", CODE)  # not `a > b ... c < d` in code
    texts += re.findall(r"set(?:Error|Message)\(\s*[\"`]([^\"`]*)", CODE)
    texts += re.findall(r"return `([^`]*)`", CODE)
    assert [text for text in texts if WORDS.search(text)] == []
    named = re.findall(r"(?:aria-label|placeholder|title)=[\"`]([^\"`]*)[\"`]", CODE)  # even one word
    assert [text for text in named if re.search(r"[A-Za-z]", text)] == []
    # The scan sees what it looks for: the phase-1 panel's words.
    old = '<span style={{ fontWeight: 600 }}>Engine</span> <summary>All fix steps</summary>'
    assert [t for t in re.findall(r">([^<>{}]+)<", old) if WORDS.search(t)] == ["All fix steps"]


def test_the_labels_keep_their_placeholders_for_the_panel() -> None:
    for key, text in panel_labels("zh-CN").items():
        assert i18n.placeholders(text) == i18n.placeholders(i18n.catalogue("en")[LABEL_PREFIX + key]), key
    assert "{count}" in panel_labels("zh-CN")["launches"]


def test_a_remedy_refusal_is_answered_in_the_readers_language() -> None:
    refusal = RemedyRefused(404, Msg("remedy_api.nothing_to_undo", remedy=repr("fit_max_model_len")))
    assert str(refusal) == "No override of remedy 'fit_max_model_len' to undo."  # the log's English
    with use_language("zh-CN"):
        body = json.loads(bytes(_refused(refusal).body))
    assert body["detail"] == "没有可撤销的 'fit_max_model_len' 覆盖项。"
    unsafe = RemedyRefused(400, Msg("remedy_api.needs_confirmation", remedy="x", risk="the risk"), risk="the risk",
                           needs_confirmation=True)
    with use_language("zh-CN"):
        body = json.loads(bytes(_refused(unsafe).body))
    assert body["detail"].startswith("修复 x 有风险") and body["needs_confirmation"] is True


def test_automatic_mode_notices_render_in_both_languages() -> None:
    notice = Msg("remedy_notice.verified", remedy="fit_max_model_len", change="max_model_len 65536 → 2048",
                 seconds="41")
    assert str(notice).startswith("Automatic fix verified: fit_max_model_len")
    chinese = notice.render("zh-CN")
    assert "自动修复已验证" in chinese and "max_model_len 65536 → 2048" in chinese and "41 秒" in chinese
    assert i18n.t("remedy_notice.note", "zh-CN", text=chinese).startswith("**注意：**")


def test_a_launch_cause_is_said_in_chinese_also_after_a_restart_of_the_app(tmp_path: Path) -> None:
    records = LaunchRecords(tmp_path)
    record = records.begin(1, 1_700_000_000.0, ["vllm", "serve"], {}, {}, "log")
    with use_language("zh-CN"):
        assert records.summaries()[0]["cause"] == "运行中"  # a launch still running
    assert records.summaries()[0]["cause"] == "running"
    record.ended = 1_700_000_010.0
    record.set_cause(cause_parts(-signal.SIGKILL, ready=True, stopped_by_app=False))
    records.save(record)
    assert record.cause == "killed while serving by SIGKILL (from outside: an admin, the OOM killer)"
    again = LaunchRecords(tmp_path)  # what the next run of the app reads
    with use_language("zh-CN"):
        chinese = again.summaries()[0]["cause"]
    assert chinese == "运行期间被 SIGKILL 终止（来自外部：管理员或 OOM killer）"
    assert again.summaries()[0]["cause"] == record.cause  # English for an English reader
    gave_up = cause_parts(1, ready=False, stopped_by_app=False) | {"gave_up": True}
    record.set_cause(gave_up)
    with use_language("zh-CN"):
        assert records.summaries()[0]["cause"] == "就绪之前退出，退出码 1；已放弃继续重启"
    assert record.cause == "exited before it was ready with code 1; the supervisor gave up"


def test_a_record_of_an_older_app_keeps_its_english_cause(tmp_path: Path) -> None:
    (tmp_path / "20260101-000000-000.json").write_text(json.dumps(
        {"id": "20260101-000000-000", "launch": 1, "started": 1.0, "command": [], "settings": {}, "overrides": {},
         "log_file": "x", "cause": "exited before it was ready with code 1"}), encoding="utf-8")
    with use_language("zh-CN"):
        assert LaunchRecords(tmp_path).summaries()[0]["cause"] == "exited before it was ready with code 1"


def test_a_remedys_reason_on_the_card_is_said_in_chinese() -> None:
    """A recorded vLLM log's KV-cache fault: the figure the fix comes from, in the card's language."""
    from chainlit_app.remedies import RemedyContext, remedies_for
    from tests.unit.test_remedies import finding, spec  # the recorded log and launch of the remedies' tests

    found = finding("dev/out_of_memory/recorded_cpu_kv_cache_65536_allow_long.log")
    proposal = remedies_for(found, RemedyContext(spec(max_model_len=65536)))[0]
    english = proposal.to_json()["reason"]
    assert english == "vLLM's estimated maximum model length: 23168 tokens fit, 65536 were asked for"
    with use_language("zh-CN"):
        card = proposal.to_json()
    assert card["reason"] == "vLLM 估算的最大模型长度：只能容纳 23168 个 token，而设置的是 65536 个"
    assert CJK.search(card["why"]) and card["overrides"] == {"max_model_len": 23168}


def test_the_supervisors_give_up_sentence_is_chinese_through_and_through() -> None:
    """The welcome and the panel show the give-up error: its inner sentence (why the last try ended) too."""
    from chainlit_app.engine.supervisor import EngineStartError

    error = EngineStartError(Msg("engine.exited_before_ready", code=1), [], 1)
    said = error.args[0]
    assert isinstance(said, Msg) and str(error) == "vLLM exited with code 1 before it was ready"
    gave_up = Msg("engine.gave_up", message=said, tries=1, log="/tmp/vllm.log")
    assert "vLLM 在就绪之前退出，退出码 1" in gave_up.render("zh-CN") and "exited" not in gave_up.render("zh-CN")
