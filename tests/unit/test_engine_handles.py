"""The two engine handles and the one place where settings become a launch. The attached handle is driven
against a real local HTTP server that answers as vLLM's does (/v1/models with a key, /version)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from chainlit_app.diagnostics import FindingsStore
from chainlit_app.engine.command import LaunchSpec, build_argv
from chainlit_app.engine.status import EngineState, EngineStatus
from chainlit_app.handles import AttachedEngine, SpawnedEngine, engine_handle_for
from chainlit_app.models import ResolvedModel
from tests.conftest import settings_for_tests
from tests.local_http import JsonHandler, serving

RESOLVED = ResolvedModel("local", "/models/m", "m")
KEY = "right-key"


def test_from_settings_carries_every_launch_setting(tmp_path: Path) -> None:
    settings = settings_for_tests(data_dir=tmp_path, max_model_len=2048, dtype="bfloat16", kv_cache_gib=3,
                                  extra_args="--seed 7", device="cpu")
    spec = LaunchSpec.from_settings(settings, RESOLVED)
    assert (spec.model, spec.served_model_name, spec.max_model_len, spec.dtype) == ("/models/m", "m", 2048,
                                                                                     "bfloat16")
    assert (spec.kv_cache_gib, spec.extra_args, spec.on_gpu) == (3, ("--seed", "7"), False)
    assert spec.port == 0 and spec.api_key == "", "port and key are chosen per launch by the supervisor"
    assert spec.cache_dir == tmp_path / "cache"


@pytest.mark.parametrize(("device", "gpu_present", "on_gpu"), [
    ("auto", False, False), ("auto", True, True), ("gpu", False, True), ("cpu", True, False)])
def test_the_device_rule_is_decided_in_one_place(device: str, gpu_present: bool, on_gpu: bool) -> None:
    spec = LaunchSpec.from_settings(settings_for_tests(device=device), RESOLVED, gpu_present=gpu_present)
    assert spec.on_gpu is on_gpu
    assert ("--gpu-memory-utilization" in build_argv("python", spec)) is on_gpu


def test_overrides_replace_fields_and_unknown_names_are_refused() -> None:
    settings = settings_for_tests(max_model_len=4096)
    spec = LaunchSpec.from_settings(settings, RESOLVED, {"max_model_len": 1024, "dtype": "float32"})
    assert (spec.max_model_len, spec.dtype) == (1024, "float32")
    with pytest.raises(ValueError, match="max_model_length"):
        LaunchSpec.from_settings(settings, RESOLVED, {"max_model_length": 1024})


def test_the_mode_picks_the_handle_and_only_a_spawned_engine_is_ours(tmp_path: Path) -> None:
    store = FindingsStore()
    spawned = engine_handle_for(settings_for_tests(mode="spawn", data_dir=tmp_path), store)
    attached = engine_handle_for(settings_for_tests(mode="attach", vllm_url="http://127.0.0.1:9/v1"), store)
    assert isinstance(spawned, SpawnedEngine) and spawned.process_control and spawned.waiting_for is None
    assert isinstance(attached, AttachedEngine) and not attached.process_control
    assert attached.waiting_for == "http://127.0.0.1:9" and attached.process is None
    assert spawned.status.state == EngineState.PREPARING and spawned.endpoint is None


class _FakeVllm(JsonHandler):
    def do_GET(self) -> None:
        if self.path == "/v1/models":
            if self.headers.get("Authorization") != f"Bearer {KEY}":
                self.send_json(401, {"error": "Unauthorized"})
            else:
                self.send_json(200, {"object": "list", "data": [{"id": "served-m", "object": "model"}]})
        elif self.path == "/version":
            self.send_json(200, {"version": "0.0-test"})
        else:
            self.send_json(200, {})


@pytest.fixture
def fake_vllm() -> Iterator[str]:
    with serving(_FakeVllm) as url:
        yield url + "/v1"


def test_attached_engine_names_a_wrong_key_then_attaches_with_the_right_one(fake_vllm: str) -> None:
    async def scenario() -> None:
        store = FindingsStore()
        seen: list[EngineStatus] = []
        wrong = AttachedEngine(settings_for_tests(mode="attach", vllm_url=fake_vllm, api_key="wrong"), store)
        wrong.add_listener(seen.append)
        assert not await wrong.recheck()
        assert not wrong.is_ready() and "401" in (wrong.status.error or "")
        assert [f["kind"] for f in store.snapshot()] == ["auth"]
        assert [s.state for s in seen] == [EngineState.CRASHED]

        right = AttachedEngine(settings_for_tests(mode="attach", vllm_url=fake_vllm, api_key=KEY), store)
        right.add_listener(seen.append)
        task = asyncio.create_task(right.start())
        assert await right.wait_ready(5.0)
        await task
        assert right.status.state == EngineState.ATTACHED and right.status.progress == "0.0-test"
        assert right.resolved is not None and right.resolved.served_name == "served-m"
        assert right.endpoint is not None and right.endpoint.api_key == KEY
        assert seen[-1].state == EngineState.ATTACHED
        await right.stop()

    asyncio.run(scenario())


def test_attached_engine_without_url_fails_with_the_fix() -> None:
    async def scenario() -> EngineStatus:
        engine = AttachedEngine(settings_for_tests(mode="attach", vllm_url=None), FindingsStore())
        await engine.start()
        assert not await engine.wait_ready(1.0), "a failed engine is not waited for"
        return engine.status

    status = asyncio.run(scenario())
    assert status.state == EngineState.FAILED and "CHAT_VLLM_URL" in (status.error or "")
