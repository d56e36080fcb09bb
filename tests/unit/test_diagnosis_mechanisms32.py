"""The general mechanisms of the round-32 pass (issue 11: holdout round 32's misses, moved to dev), each on the
real lines it was written from and each beside the shape that must keep its reading.

An answer printed with its letters as `\\u` escapes; a traceback cut after the line that enters the engine's loop;
request parameters and request fields vLLM removed; the hub's words for a file a repository does not hold.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answers import unescaped


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_an_answer_printed_as_escapes_is_read_as_its_letters() -> None:
    lines = [  # vLLM #281 (an OpenLLaMA model given LLaMA's tokenizer, vLLM 0.1)
        "prompt='Hello, my name is'",
        "text=\"Bastian Mehl and I'm going to talk about how we can solve\"",
        "prompt='Hello, my name is'",
        "text='\\u0442\\u0435 Business up t\");ymbol\\u7532 _ itsardervesag t beskrevs t \\u201c",
    ]
    assert unescaped(lines[3]).startswith("text='те Business")
    assert _root(lines)[0] == "decode_error"
    # escaped Chinese in a good answer stays a good answer, and one escape is left as written
    good = ['{"content": "\\u4f60\\u597d\\uff0c\\u6211\\u662f ERNIE, an assistant made to help you."}']
    assert _root(good)[0] == HEALTHY
    assert unescaped("path C:\\users\\me") == "path C:\\users\\me"


def test_a_traceback_cut_after_the_line_entering_the_engine_loop_was_serving() -> None:
    lines = [  # tenstorrent/vllm #37 (V0's MQLLMEngine; the stored copy stops after the loop's call)
        "ERROR 11-23 14:35:16 engine.py:159] AssertionError('Currently not supporting logprobs')",
        "ERROR 11-23 14:35:16 engine.py:159] Traceback (most recent call last):",
        'ERROR 11-23 14:35:16 engine.py:159]   File "/home/u/vllm/vllm/engine/multiprocessing/engine.py", line 157, '
        "in start",
        "ERROR 11-23 14:35:16 engine.py:159]     self.run_engine_loop()",
    ]
    assert _root(lines)[0] == "engine_error"
    # the same cut traceback entering the model's loading is a start-up failure
    loading = [*lines[:3], "ERROR 11-23 14:35:16 engine.py:159]     self.model_executor.load_model()"]
    assert _root(loading)[0] == "startup_failure"


def test_a_parameter_vllm_removed() -> None:
    body = """Error code: 400 - {'message': "Unexpected keyword argument 'best_of'", 'object': 'error'}"""
    assert _root([body]) == ("version_mismatch", "parameter_vllm_removed")  # ms-swift #6947
    # a keyword vLLM never had, refused while serving, is no release's fault
    other = """Error code: 400 - {'message': "Unexpected keyword argument 'tempreture'", 'object': 'error'}"""
    assert _root([other])[1] != "parameter_vllm_removed"


def test_a_request_field_a_plugin_reads_and_vllm_lacks() -> None:
    lines = [  # vllm-project/production-stack #433 (an LMCache image whose vLLM lacks the field)
        "    raise AttributeError(f'{type(self).__name__!r} object has no attribute {item!r}')",
        "AttributeError: 'CompletionRequest' object has no attribute 'store_cache'",
    ]
    assert _root(lines) == ("version_mismatch", "engine_attribute_removed")
    own = ["AttributeError: 'MyRequest' object has no attribute 'store_cache'"]
    assert _root(own)[1] != "engine_attribute_removed"


def test_the_hubs_words_for_a_file_a_repository_does_not_hold() -> None:
    line = ("Entry Not Found for url: https://huggingface.co/impactframes/llama3_if_ai_sdpromptmkr_q4km/resolve/main/"
            "config.json.")  # runpod-workers/worker-vllm #70 (a repository of GGUF files)
    assert _root([line]) == ("model_not_found", "model_files_missing")
