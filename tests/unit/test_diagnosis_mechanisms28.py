"""The general mechanisms of the round-28 pass (issue 11: holdout round 28's misses, moved to dev), each on the
real lines it was written from and each beside the shape that must keep its reading.

Error lines in shapes the reader did not see as errors (an indented exception line, a traceback folded onto one
line, torch's messages printed without their class), colour codes whose escape byte became U+FFFD, and five ways
a version mismatch shows: a parser name in vLLM's own words, an attribute of vLLM's tokenizer wrappers, a model's
tokenizer code older than transformers, transformers' own attribute errors, vLLM failing to import, and a
plugin's code failing on vLLM's objects while vLLM called it.
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.plugin_frames import plugin_called_by_vllm


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_an_indented_exception_line_is_an_error() -> None:
    # vllm-gaudi #1407: the two lines a poster quoted under the command, indented
    line = ("  RuntimeError: The expanded size of the tensor (384) must match the existing size (2880) at "
            "non-singleton dimension 2. Target sizes: [16, 2880, 384]. Tensor sizes: [16, 2880, 2880]")
    assert classify_lines([line]).kind == "startup_failure"
    # indented lines that are not exception lines stay what they were
    quiet = ["INFO 05-01 10:00:00 [api_server.py:1024] Available routes are:",
             "  Route: /v1/chat/completions, Methods: POST",
             "    Note: this model runs best with --enforce-eager"]
    assert classify_lines(quiet).kind == HEALTHY


def test_colour_codes_whose_escape_became_a_replacement_character_are_not_garbled_output() -> None:
    # vLLM #21713: ERNIE-4.5-300B-A47B-Base-PT, each worker's line coloured, the ESC byte shown as U+FFFD
    lines = ["\ufffd[1;36m(VllmWorker rank=3 pid=4867)\ufffd[0;0m ERROR 07-26 18:47:24 [multiproc_executor.py:511] "
             "Traceback (most recent call last):",
             "\ufffd[1;36m(VllmWorker rank=3 pid=4867)\ufffd[0;0m ERROR 07-26 18:47:24 [multiproc_executor.py:511] "
             'File "/usr/local/lib64/python3.9/site-packages/vllm/v1/executor/multiproc_executor.py", line 485, '
             "in worker_main",
             "\ufffd[1;36m(VllmWorker rank=3 pid=4867)\ufffd[0;0m ERROR 07-26 18:47:24 [multiproc_executor.py:511] "
             "worker = WorkerProc(*args, **kwargs)",
             "\ufffd[1;36m(VllmWorker rank=3 pid=4867)\ufffd[0;0m ERROR 07-26 18:47:24 [multiproc_executor.py:511] "
             "ValueError: Following weights were not initialized from checkpoint: "
             "{'model.layers.19.mlp.shared_experts.gate_up_proj.weight'}"]
    report = classify_lines(lines)
    assert report.kind == "startup_failure"
    assert all(f.kind != "decode_error" for f in report.findings)
    # a replacement character in an answer is still garbled output
    answer = '{"choices":[{"message":{"role":"assistant","content":"\ufffd\ufffd\ufffd\ufffd\ufffd[1] \ufffd\ufffd"},' \
             '"finish_reason":"stop"}]}'
    assert classify_lines([answer]).kind == "decode_error"


def test_a_traceback_folded_onto_one_line() -> None:
    # baichuan-inc/Baichuan2 #204: the frame, its code and the exception on one line, the start cut
    line = ('ile "/root/.cache/huggingface/modules/transformers_modules/Baichuan2-13B-Chat/tokenization_baichuan.py", '
            "line 101, in vocab_size return self.sp_model.get_piece_size() AttributeError: 'BaichuanTokenizer' "
            "object has no attribute 'sp_model'")
    assert _root([line]) == ("version_mismatch", "remote_tokenizer_older_than_transformers")
    folded = ('File "/app/vllm/entrypoints/openai/api_server.py", line 12, in main run() File '
              '"/app/vllm/engine/arg_utils.py", line 40, in create ValueError: max_model_len must be positive')
    assert classify_lines([folded]).kind == "startup_failure"
    # a frame's words without an exception after them are no error
    assert classify_lines(['see File "app.py", line 3, in main for the call that starts the server']).kind == HEALTHY


def test_torchs_messages_printed_without_their_class() -> None:
    # MoonshotAI/Kimi-K2 #39 (the message alone, quoted by its poster)
    assert classify_lines(["Dimension out of range (expected to be in range of [-2, 1], but got 2)"]).kind \
        == "startup_failure"
    assert classify_lines(["The size of tensor a (4096) must match the size of tensor b (2048) at non-singleton "
                           "dimension 1"]).kind == "startup_failure"
    # the same words inside a sentence are not the message
    assert classify_lines(["We checked that the dimension out of range error is gone in 0.10"]).kind == HEALTHY


def test_a_parser_name_refused_in_vllms_own_words() -> None:
    # MoonshotAI/Kimi-K2 #19 (vLLM 0.9.2)
    line = ("KeyError: 'invalid tool call parser: kimi_k2 (chose from { deepseek_v3,granite-20b-fc,granite,hermes,"
            "internlm,jamba,llama4_pythonic,llama4_json,llama3_json,minimax,mistral,phi4_mini_json,pythonic,xlam })'")
    assert _root([line]) == ("version_mismatch", "parser_of_a_later_release")
    reasoning = "KeyError: 'invalid reasoning parser: ernie45 (choose from { deepseek_r1,qwen3 })'"
    assert _root([reasoning]) == ("version_mismatch", "parser_of_a_later_release")


def test_an_attribute_vllms_tokenizer_wrapper_does_not_have() -> None:
    # dottxt-ai/outlines #576 (outlines.serve on vLLM built from main)
    line = "AttributeError: 'TokenizerGroup' object has no attribute 'get_vocab'"
    assert _root([line]) == ("version_mismatch", "engine_attribute_removed")


def test_a_models_tokenizer_code_older_than_transformers() -> None:
    lines = ["Traceback (most recent call last):",
             '  File "/root/.cache/huggingface/modules/transformers_modules/chatglm3-6b/tokenization_chatglm.py", '
             "line 108, in vocab_size",
             "    return self.tokenizer.n_words",
             "AttributeError: 'ChatGLMTokenizer' object has no attribute 'tokenizer'"]
    assert _root(lines) == ("version_mismatch", "remote_tokenizer_older_than_transformers")
    # another missing attribute of a tokenizer keeps the tokenizer's own reading
    other = [*lines[:3], "AttributeError: 'ChatGLMTokenizer' object has no attribute 'encode_plus_fast'"]
    assert _root(other)[1] != "remote_tokenizer_older_than_transformers"


def test_transformers_own_attribute_errors() -> None:
    # vLLM #51744 (vLLM 0.27.0 with transformers 5.15.0, Gemma 4)
    lines = ["vLLM: 0.27.0", "Transformers: 5.15.0",
             "transformers.integrations.heterogeneity.configuration_utils.AmbiguousGlobalPerLayerAttributeError:",
             "'head_dim' is a per-layer attribute and may vary across layers.",
             "Access it via config.per_layer_config[i].head_dim."]
    assert _root(lines) == ("version_mismatch", "transformers_refuses_attribute")
    # transformers' other errors are not this rule's
    other = ["transformers.utils.import_utils.OptionalDependencyNotAvailable: sentencepiece is required"]
    assert _root(other)[1] != "transformers_refuses_attribute"


def test_vllm_failing_to_import() -> None:
    # ai-dynamo/dynamo #441 (ai_dynamo_vllm 0.7.2 and vllm 0.7.3 in one environment)
    lines = ["thread 'tokio-runtime-worker' panicked at lib/engines/vllm/src/worker.rs:247:17:",
             "Failed to import python 'vllm' module. Are we running in the correct venv? AttributeError: class must "
             "define a '_type_' attribute"]
    assert _root(lines) == ("version_mismatch", "vllm_import_fails")
    assert classify_lines(["INFO 05-01 10:00:00 [__init__.py:10] imported vllm module from /opt/venv"]).kind == HEALTHY


_CONNECTOR = [
    'File "/usr/local/lib/python3.10/dist-packages/vllm/v1/core/sched/scheduler.py", line 563, in schedule',
    "    meta = self.connector.build_connector_meta(scheduler_output)",
    '  File "/home/xzx/code/LMCache/lmcache/integration/vllm/lmcache_connector_v1.py", line 162, in '
    "build_connector_meta",
    "    return self._lmcache_engine.build_connector_meta(scheduler_output)",
    '  File "/home/xzx/code/LMCache/lmcache/integration/vllm/vllm_v1_adapter.py", line 932, in build_connector_meta',
    "    for i, req_id in enumerate(cached_reqs.req_ids):",
    "AttributeError: 'list' object has no attribute 'req_ids'",
]


def test_a_plugins_code_failing_on_vllms_objects_while_vllm_called_it() -> None:
    # LMCache #1001 (LMCache's connector on vLLM 0.9.1)
    assert _root(_CONNECTOR) == ("version_mismatch", "raised_in_plugin_of_another_release")
    # the same error raised in vLLM's own code is vLLM's
    own = [_CONNECTOR[0], _CONNECTOR[1], "AttributeError: 'list' object has no attribute 'req_ids'"]
    assert _root(own)[1] != "raised_in_plugin_of_another_release"
    # the plugin's frames alone (vLLM did not call it) say nothing of who called whom
    assert plugin_called_by_vllm([("/home/x/LMCache/lmcache/integration/vllm/vllm_v1_adapter.py", "f")]) == ""
    # the standard library or torch under vLLM is no plugin
    assert plugin_called_by_vllm([("/usr/lib/python3.10/site-packages/vllm/worker.py", "run"),
                                  ("/usr/lib/python3.10/asyncio/events.py", "_run")]) == ""
    assert plugin_called_by_vllm([("/opt/conda/lib/python3.11/site-packages/vllm/model.py", "forward"),
                                  ("/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", "call")]) == ""
