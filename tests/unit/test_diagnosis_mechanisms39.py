"""The round-39 pass (issue 11: holdout round 39's two misses, moved to dev), on the real lines it was written from,
beside the shapes that must keep their reading: a request's own logits processor failing while serving (not a
start-up), and a local model whose config names its code by a hub id that cannot be reached.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

LOGITS = "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/layers/logits_processor.py"


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_requests_logits_processor_failing_is_an_engine_error() -> None:
    # distilabel #658: the stored copy starts inside the frame line (its 'File' lost); distilabel passed [None]
    excerpt = [f' "{LOGITS}", line 106, in _apply_logits_processors',
               "    logits_row = logits_processor(token_ids, logits_row)",
               "TypeError: 'NoneType' object is not callable"]
    assert _root(excerpt)[0] == "engine_error"
    whole = ["Traceback (most recent call last):", f'  File "{LOGITS}", line 106, in _apply_logits_processors',
             "    logits_row = logits_processor(token_ids, logits_row)",
             "TypeError: 'NoneType' object is not callable"]
    assert _root(whole)[0] == "engine_error"


def test_the_same_frame_under_the_warm_up_stays_a_start_up_failure() -> None:
    # a profiling run calls the model's forward as a request would: a start-up frame outweighs the serving one
    warm_up = ["Traceback (most recent call last):",
               '  File "/x/vllm/worker/model_runner.py", line 1211, in profile_run',
               "    self.execute_model(model_input, kv_caches, intermediate_tensors)",
               f'  File "{LOGITS}", line 106, in _apply_logits_processors',
               "    logits_row = logits_processor(token_ids, logits_row)",
               "TypeError: 'NoneType' object is not callable"]
    assert _root(warm_up)[0] == "startup_failure"


def test_code_named_by_a_hub_id_for_a_local_model() -> None:
    # ChatGLM3 #946: --model is a local folder, auto_map names THUDM/chatglm3-6b's module, the hub is out of reach
    lines = [" python -m vllm.entrypoints.openai.api_server     --model=/usr/local/models/THUDM/chatglm3-6b     "
             "--trust-remote-code     --served-model-name qwmiic     --host 127.0.0.1     --port 9999        "
             "--dtype=half",
             "We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files "
             "and it looks like THUDM/chatglm3-6b is not the path to a directory containing a file named "
             "tokenization_chatglm.py."]
    assert _root(lines) == ("model_not_found", "remote_code_by_hub_id")


def test_the_same_offline_words_for_a_config_keep_their_readings() -> None:
    hub = ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
           "cached files and it looks like Qwen/Qwen2-7B is not the path to a directory containing a file named "
           "config.json.")
    assert _root([hub]) == ("startup_failure", "hf_offline")
    bare = hub.replace("Qwen/Qwen2-7B", "Qwen-14B-Chat-AWQ")
    assert _root([bare]) == ("model_not_found", "model_path_not_there")
    # a file whose name only starts like code is not code
    not_code = hub.replace("config.json", "tokenizer.pyc.json")
    assert _root([not_code]) == ("startup_failure", "hf_offline")
