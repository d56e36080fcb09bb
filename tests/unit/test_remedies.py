"""Each remedy computed from a real recorded vLLM log: the log is classified by the app's own classifier (as
the CLI does), and the remedy reads its new value from the finding's evidence line."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest

from chainlit_app.diagnostics import Finding, FindingsStore, classify_file
from chainlit_app.doctor.check import PreflightConfig, config_from_settings
from chainlit_app.doctor.checks_engine import check_dtype
from chainlit_app.doctor.checks_resources import check_gpu_memory, check_kv_cache
from chainlit_app.doctor.model_shape import Dims
from chainlit_app.engine.command import LaunchSpec, build_argv
from chainlit_app.models import ResolvedModel
from chainlit_app.remedies import BY_ID, RemedyContext, finding_from_entry, remedies_for
from chainlit_app.remedies.figures import kv_fit
from chainlit_app.remedies.templates import CHATML, ERNIE45, LLAMA3, SHIPPED
from chainlit_app.settings import Settings

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
GIB = 1024**3


def spec(**fields: object) -> LaunchSpec:
    base: dict[str, object] = {"model": "m", "served_model_name": "m", "host": "127.0.0.1", "port": 0,
                               "api_key": "", "max_model_len": 4096}
    base.update(fields)
    return LaunchSpec(**base)  # type: ignore[arg-type]


def finding(log: str, rule: str | None = None) -> Finding:
    """The root finding of a recorded log (or its finding of `rule`), as the classifier names it."""
    report = classify_file(LOGS / log)
    found = report.root if rule is None else next((f for f in report.findings if f.rule == rule), None)
    assert found is not None, (log, [(f.kind, f.rule) for f in report.findings])
    return found


def only(found: Finding, ctx: RemedyContext, remedy: str) -> dict[str, object]:
    proposals = [p for p in remedies_for(found, ctx) if p.remedy.id == remedy]
    assert len(proposals) == 1, [p.remedy.id for p in remedies_for(found, ctx)]
    return proposals[0].overrides


# -- KV cache: the largest max_model_len vLLM says fits --------------------------------------------------------
@pytest.mark.parametrize(("log", "asked", "fits"), [
    ("dev/out_of_memory/recorded_cpu_kv_cache_65536_allow_long.log", 65536, 23168),
    ("dev/out_of_memory/bonito7_kv_cache_16816_lt_32768.log", 32768, 16816),
    ("dev/out_of_memory/gpustack1800_qwen25vl_kv_cache_2400_lt_8192.log", 8192, 2400),
    ("dev/out_of_memory/gh4650_deepseekv2_kv_cache_2368_lt_16000.log", 16000, 2368),
    ("dev/out_of_memory/gh29233_cpu_kv_cache_too_small.log", 40960, 37376),
    ("holdout/out_of_memory/tpuinference223_kv_cache_16gib_needed_071_available.log", 131072, 5632),
])
def test_fit_max_model_len_takes_vllms_figure(log: str, asked: int, fits: int) -> None:
    found = finding(log)
    assert (found.kind, found.rule) == ("out_of_memory", "kv_cache_too_small")
    proposals = remedies_for(found, RemedyContext(spec(max_model_len=asked)))
    assert proposals[0].remedy.id == "fit_max_model_len" and proposals[0].remedy.safe
    assert proposals[0].overrides == {"max_model_len": fits}
    assert proposals[0].previous == {"max_model_len": asked}
    assert str(fits) in proposals[0].reason


def test_fit_max_model_len_never_raises_the_length() -> None:
    found = finding("dev/out_of_memory/bonito7_kv_cache_16816_lt_32768.log")
    assert not remedies_for(found, RemedyContext(spec(max_model_len=16000)))


def test_fit_scaled_when_vllm_prints_no_estimate() -> None:
    """vLLM omits the estimate when it comes out as 0; the needed and available figures still give a length."""
    text = ("ValueError: To serve at least one request with the models's max seq len (40960), (4.38 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (4.00 GiB). Try increasing ...")
    fit = kv_fit(text)
    assert fit is not None and fit.fits == 37392 and fit.fits % 16 == 0


def test_fit_from_the_doctors_kv_cache_check() -> None:
    """The doctor refuses before vLLM starts; its message carries the same figure."""
    dims = Dims(hidden=576, layers=30, heads=9, kv_heads=3, head_dim=64, intermediate=1536, vocab=49152, tied=True)
    check = check_kv_cache(dims, PreflightConfig(model="m", max_model_len=65536, dtype="float32"))
    found = check.to_finding()
    assert found is not None and found.kind == "out_of_memory"
    assert only(found, RemedyContext(spec(max_model_len=65536)), "fit_max_model_len") == {"max_model_len": 23301}


def test_more_kv_cache_only_on_a_cpu_with_the_ram() -> None:
    found = finding("dev/out_of_memory/gh29233_cpu_kv_cache_too_small.log")
    cpu = spec(max_model_len=40960, kv_cache_gib=4)
    assert only(found, RemedyContext(cpu, available_ram=16 * GIB), "more_kv_cache") == {"kv_cache_gib": 5}
    assert not BY_ID["more_kv_cache"].safe and BY_ID["more_kv_cache"].risk
    ids = [p.remedy.id for p in remedies_for(found, RemedyContext(cpu, available_ram=GIB))]
    assert ids == ["fit_max_model_len"]
    gpu = spec(max_model_len=40960, kv_cache_gib=4, on_gpu=True)
    assert [p.remedy.id for p in remedies_for(found, RemedyContext(gpu, available_ram=64 * GIB))] == [
        "fit_max_model_len"]


# -- GPU memory utilisation: what the log says is free ---------------------------------------------------------
def test_gpu_utilization_lowered_to_what_is_free() -> None:
    found = finding("dev/out_of_memory/gh25837_free_memory_less_than_gpu_util_4gb.log")
    assert found.rule == "gpu_free_memory_below_utilization"
    ctx = RemedyContext(spec(on_gpu=True, gpu_memory_utilization=0.9))
    assert only(found, ctx, "lower_gpu_memory_utilization") == {"gpu_memory_utilization": 0.8}
    assert not remedies_for(found, RemedyContext(spec(on_gpu=True, gpu_memory_utilization=0.7)))


def test_gpu_utilization_from_the_doctors_gpu_check() -> None:
    check = check_gpu_memory((8192, 5000), None, None, PreflightConfig(model="m", gpu_memory_utilization=0.9))
    found = check.to_finding()
    assert found is not None
    overrides = only(found, RemedyContext(spec(on_gpu=True)), "lower_gpu_memory_utilization")
    assert overrides == {"gpu_memory_utilization": 0.6}  # 4.9 of 8.0 GiB (two-decimal figures, rounded down)


# -- port_in_use: a free port, only for a fixed port that is really taken --------------------------------------
@pytest.fixture()
def taken_port() -> Iterator[int]:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        yield int(blocker.getsockname()[1])


def test_free_port_for_a_taken_fixed_port(taken_port: int) -> None:
    found = finding("dev/port_in_use/recorded_cpu_port_taken.log")
    overrides = only(found, RemedyContext(spec(port=taken_port)), "free_port")
    new = overrides["port"]
    assert isinstance(new, int) and new != taken_port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", new))  # free indeed


def test_no_port_remedy_when_the_port_is_free_or_picked_per_launch_or_not_the_servers(taken_port: int) -> None:
    found = finding("dev/port_in_use/recorded_cpu_port_taken.log")
    assert not remedies_for(found, RemedyContext(spec(port=0)))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    assert not remedies_for(found, RemedyContext(spec(port=free)))
    for log in ("dev/port_in_use/vllmascend405_hccl_port_bound_already.log",  # the HCCL port
                "holdout/port_in_use/gpustack6019_zmq_bind_address_in_use_multinode.log",  # a worker's ZMQ port
                "dev/port_in_use/gh11617_tcpstore.log",  # torch's TCPStore
                "dev/port_in_use/chinesellamaalpaca2_178_uvicorn_bind_8000.log"):  # names port 8000, not ours
        other = finding(log, rule="port_in_use")
        assert not remedies_for(other, RemedyContext(spec(port=taken_port))), log


def test_free_port_when_the_line_names_our_port(taken_port: int) -> None:
    text = f"ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', {taken_port}): address"
    found = Finding(kind="port_in_use", line=3, text=text + " already in use", hint="", rule="port_in_use")
    assert only(found, RemedyContext(spec(port=taken_port)), "free_port")["port"] != taken_port


# -- chat template: a shipped one whose special tokens the tokenizer has ---------------------------------------
def model_folder(tmp_path: Path, model_type: str, tokens: list[str], template: str | None = None) -> Path:
    folder = tmp_path / model_type
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": ["X"]}))
    added = [{"id": i, "content": t, "special": True} for i, t in enumerate(tokens)]
    (folder / "tokenizer.json").write_text(json.dumps({"added_tokens": added, "model": {"vocab": {}}}))
    config = {} if template is None else {"chat_template": template}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize(("log", "rule"), [
    ("dev/chat_template/recorded_cpu_no_chat_template.log", "access_400_every_chat"),
    ("dev/chat_template/codegeex4_66_vllm055_no_chat_template.log", "no_chat_template"),
])
@pytest.mark.parametrize(("model_type", "tokens", "expected"), [
    ("llama", ["<|im_start|>", "<|im_end|>"], CHATML),
    ("llama", ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"], LLAMA3),
    ("ernie4_5", ["<|begin_of_sentence|>", "<|end_of_sentence|>"], ERNIE45),
    ("ernie4_5", ["<|im_start|>", "<|im_end|>"], CHATML),
    ("qwen2", ["<|im_start|>", "<|im_end|>", "<|endoftext|>"], CHATML),
])
def test_chat_template_by_family_and_tokens(tmp_path: Path, log: str, rule: str, model_type: str,
                                             tokens: list[str], expected: object) -> None:
    found = finding(log)
    assert (found.kind, found.rule) == ("chat_template", rule)
    folder = model_folder(tmp_path, model_type, tokens)
    overrides = only(found, RemedyContext(spec(), folder), "shipped_chat_template")
    assert overrides == {"chat_template": str(expected.path)}  # type: ignore[attr-defined]


def test_no_template_remedy_without_fitting_tokens_or_with_a_template(tmp_path: Path) -> None:
    found = finding("dev/chat_template/recorded_cpu_no_chat_template.log")
    bare = model_folder(tmp_path, "gpt2", ["<|endoftext|>"])
    assert not remedies_for(found, RemedyContext(spec(), bare))
    (tmp_path / "has").mkdir()
    has = model_folder(tmp_path / "has", "llama", ["<|im_start|>", "<|im_end|>"], template="{{ messages }}")
    assert not remedies_for(found, RemedyContext(spec(), has))
    broken = finding("dev/chat_template/workervllm129_template_syntax_error.log")  # broken, not missing
    assert not remedies_for(broken, RemedyContext(spec(), model_folder(tmp_path, "llama", ["<|im_start|>",
                                                                                         "<|im_end|>"])))


@pytest.mark.parametrize("template", SHIPPED, ids=lambda t: t.name)
def test_shipped_templates_render_a_conversation(template: object) -> None:
    """Rendered as vLLM renders them (jinja2, trim_blocks off): every turn, then the assistant's prompt."""
    env = jinja2.Environment()
    text = env.from_string(template.path.read_text()).render(  # type: ignore[attr-defined]
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                  {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Capital of France?"}],
        add_generation_prompt=True, bos_token="<s>")
    for token in template.tokens:  # type: ignore[attr-defined]
        assert token in text
    assert "Capital of France?" in text and text.index("Hi") < text.index("Hello") < text.index("Capital")
    assert text.rstrip().endswith(("assistant", "Assistant:", "<|end_header_id|>"))


# -- float32 on a CPU after garbled output in half precision ---------------------------------------------------
def test_float32_for_half_precision_on_cpu() -> None:
    found = finding("dev/decode_error/recorded_cpu_random_model_fffd_output.log")
    assert found.kind == "decode_error"
    assert only(found, RemedyContext(spec(dtype="bfloat16")), "float32_on_cpu") == {"dtype": "float32"}
    assert only(found, RemedyContext(spec(dtype="float16")), "float32_on_cpu") == {"dtype": "float32"}
    # That log was recorded in float32 (a random model): float32 would not help, so nothing is proposed.
    assert not remedies_for(found, RemedyContext(spec(dtype="float32")))
    assert not remedies_for(found, RemedyContext(spec(dtype="auto")))  # auto is float32 on CPUs
    assert not remedies_for(found, RemedyContext(spec(dtype="bfloat16", on_gpu=True)))


def test_float32_from_the_doctors_dtype_warning() -> None:
    found = check_dtype(PreflightConfig(model="m", dtype="bfloat16", cpu_bf16=False)).to_finding()
    assert found is not None and found.kind == "decode_error"
    assert only(found, RemedyContext(spec(dtype="bfloat16")), "float32_on_cpu") == {"dtype": "float32"}


# -- trust_remote_code: proposed, never safe -------------------------------------------------------------------
def test_trust_remote_code_is_unsafe_and_states_the_risk() -> None:
    found = finding("dev/startup_failure/litellm4600_vllm_provider_trust_remote_code_wrapped_as_apiconnectionerror.log")
    assert found.rule == "trust_remote_code_needed"
    proposals = remedies_for(found, RemedyContext(spec()))
    assert [p.remedy.id for p in proposals] == ["trust_remote_code"]
    remedy = proposals[0].remedy
    assert proposals[0].overrides == {"trust_remote_code": True}
    assert remedy.safe is False and "Python code" in remedy.risk
    assert not remedies_for(found, RemedyContext(spec(trust_remote_code=True)))


def test_other_findings_get_no_remedy() -> None:
    for log in ("dev/startup_failure/gh32338_value_error_arch_not_supported.log",
                "dev/out_of_memory/gh783_torch_cuda_oom.log",
                "dev/model_not_found/recorded_cpu_wrong_model_name.log"):
        assert not remedies_for(finding(log), RemedyContext(spec(port=0))), log


def test_every_remedy_has_its_data() -> None:
    for remedy in BY_ID.values():
        assert remedy.why.endswith(".") and remedy.undo.startswith("Remove the override")
        assert remedy.changes and (remedy.safe or remedy.risk)


# -- the launch: the new fields reach vLLM's argv and the doctor ----------------------------------------------
def test_remedy_fields_reach_argv_and_the_doctor(tmp_path: Path) -> None:
    argv = build_argv("python", spec(chat_template=str(CHATML.path), trust_remote_code=True))
    assert argv[argv.index("--chat-template") + 1] == str(CHATML.path) and "--trust-remote-code" in argv
    assert "--chat-template" not in build_argv("python", spec()) and "--trust-remote-code" not in build_argv(
        "python", spec())
    settings = Settings(data_dir=tmp_path, model="demo")
    config = config_from_settings(settings, str(tmp_path), {"chat_template": str(CHATML.path), "max_model_len": 99})
    assert config.extra_args[:2] == ("--chat-template", str(CHATML.path)) and config.max_model_len == 99
    resolved = ResolvedModel("local", str(tmp_path), "m")
    assert LaunchSpec.from_settings(settings, resolved, {"dtype": "float32"}).dtype == "float32"


def test_a_stored_finding_reads_back_for_its_remedy() -> None:
    """The panel holds store entries, not Findings: the newest evidence line carries the figure."""
    store = FindingsStore()
    store.add(finding("dev/out_of_memory/bonito7_kv_cache_16816_lt_32768.log"))
    (entry,) = store.snapshot()
    back = finding_from_entry(entry)
    assert (back.kind, back.rule, back.line) == ("out_of_memory", "kv_cache_too_small", 1)
    assert only(back, RemedyContext(spec(max_model_len=32768)), "fit_max_model_len") == {"max_model_len": 16816}


def test_the_automatic_mode_applies_only_the_issues_launch_fixes() -> None:
    """CHAT_AUTO_REMEDY=safe never changes what the model answers, and never runs the model's own code."""
    from chainlit_app.remedies.table import AUTOMATIC, BY_ID

    assert set(BY_ID) >= AUTOMATIC
    assert all(BY_ID[remedy_id].safe for remedy_id in AUTOMATIC)
    assert not AUTOMATIC & {"repetition_penalty", "default_generation_config", "trust_remote_code", "more_kv_cache"}
