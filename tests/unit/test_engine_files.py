"""Log rotation, tail reading, start-up progress and /metrics parsing."""

from __future__ import annotations

from pathlib import Path

from chainlit_app.engine.http import normalise_base_url, parse_metrics
from chainlit_app.engine.logfiles import latest_progress, read_tail, rotate


def test_rotation_keeps_previous_launches_bounded(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    for launch in range(6):
        rotate(log, keep=3)
        log.write_text(f"launch {launch}\n")
    assert log.read_text() == "launch 5\n"
    assert (tmp_path / "vllm.log.1").read_text() == "launch 4\n"
    assert (tmp_path / "vllm.log.2").read_text() == "launch 3\n"
    assert not (tmp_path / "vllm.log.3").exists()


def test_read_tail_reads_only_the_end(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_text("".join(f"line {i}\n" for i in range(100_000)))
    assert read_tail(log, 3) == ["line 99997", "line 99998", "line 99999"]
    assert read_tail(tmp_path / "missing.log") == []


def test_latest_progress_strips_the_prefix() -> None:
    lines = [
        "(APIServer pid=1) INFO 11-30 14:00:01 [api_server.py:1] vLLM API server version 0.32.0",
        "(EngineCore pid=2) INFO 11-30 14:00:09 [default_loader.py:1] Loading weights took 0.36 seconds",
        "(EngineCore pid=2) WARNING 11-30 14:00:10 [x.py:1] something unrelated",
    ]
    assert latest_progress(lines) == "Loading weights took 0.36 seconds"
    assert latest_progress(["nothing here"]) is None


def test_base_url_normalisation() -> None:
    for url in ("http://h:8000", "http://h:8000/", "http://h:8000/v1", "http://h:8000/v1/", "h:8000/v1"):
        assert normalise_base_url(url) == "http://h:8000"


METRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="demo"} 2.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="demo"} 1.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="demo"} 0.25
# TYPE vllm:generation_tokens counter
vllm:generation_tokens_total{engine="0",model_name="demo"} 1234.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="demo"} 3.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="demo"} 4.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="demo"} 0.8
"""


def test_metrics_parsing() -> None:
    snap = parse_metrics(METRICS)
    assert snap.running == 2
    assert snap.waiting == 1
    assert snap.kv_cache_usage == 0.25
    assert snap.generation_tokens_total == 1234
    assert snap.mean_ttft is not None and abs(snap.mean_ttft - 0.2) < 1e-9
