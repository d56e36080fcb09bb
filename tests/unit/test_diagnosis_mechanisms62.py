"""The round-62 pass (issue 11: holdout round 62's three misses, moved to dev), on the real lines they were written
from, beside the shapes that must keep their reading: an offline batch's bar that counts more prompts done after a
preemption warning shows the batch going on; a bar a notebook stored at 0 % is not the last word when an answer
is printed after it; a printed prompt telling its reader what they must do is no failure sentence; and a builtin
type subscripted as a package is imported is a Python older than the package. A batch that never moves again, a
bar that is the last line, a bare failure sentence and a None subscripted keep their readings.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

PREEMPTED = (  # 0xayman's graduation notebooks: 28,461 prompts on a Colab T4
    "WARNING 10-11 09:22:25 scheduler.py:1439] Sequence group 127 is preempted by PreemptionMode.RECOMPUTE mode "
    "because there is not enough KV cache space. This can affect the end-to-end performance. Increase "
    "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1")
BAR_0 = ("\rProcessed prompts:   0%|          | 0/28461 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, output: 0.00 "
         "toks/s]")
BAR_2 = ("Processed prompts:   2%|▏         | 495/28461 [06:22<1:58:30,  3.93it/s, est. speed input: 745.61 toks/s, "
         "output: 55.48 toks/s]")


def test_a_batch_that_goes_on_past_a_preemption_is_not_slowed() -> None:
    assert classify_lines([BAR_0, PREEMPTED, BAR_2]).kind == "healthy"


def test_a_batch_that_never_moves_after_a_preemption_still_is() -> None:
    assert classify_lines([BAR_2, PREEMPTED]).kind == "slow_or_stalled"
    assert classify_lines([BAR_2, PREEMPTED, BAR_2]).kind == "slow_or_stalled"
    assert classify_lines([PREEMPTED]).kind == "slow_or_stalled"


NOTEBOOK = [  # 666xz666's CoH-Impl notebook: Mixtral-8x7B GPTQ on vLLM 0.8.5, the widget's first drawing stored
    "INFO 05-23 03:50:16 [core.py:159] init engine (profile, create kv cache, warmup model) took 5.56 seconds",
    "INFO 05-23 03:50:16 [core_client.py:439] Core engine process 0 ready.",
    "Processed prompts:   0%|          | 0/1 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, output: 0.00 toks/s]",
    "Original Prompt: ",
    "You must be able to correctly predict the {whom} of the given query from a given text consisting",
    "of multiple historical events in the form of “{subject} {relation} {object} {time}” and the query in",
    "Please strictly follow the above demands for output.",
    "",
    "Generated Text: ",
    "",
    "Possible answers:",
    "1. Independent_Corrupt_Practices_Commission",
    "2. Education_(Nigeria)",
    "Finish Reason: stop",
]


def test_a_bar_stored_at_zero_then_an_answer_is_no_stall() -> None:
    assert classify_lines(NOTEBOOK).kind == "healthy"
    assert classify_lines(NOTEBOOK[:3]).kind == "slow_or_stalled"  # the bar as the last word still is


def test_a_prompt_telling_its_reader_what_they_must_do_is_no_failure_sentence() -> None:
    assert classify_lines(NOTEBOOK[3:7]).kind == "healthy"
    assert classify_lines(["The tensor parallel size must be a divisor of the number of heads"]).kind != "healthy"
    assert classify_lines(["Model loading failed: could not read the weights"]).kind != "healthy"


FLASHINFER = [  # phivan3008's meeting-translator: vLLM 0.27.1 under Python 3.11, flashinfer imported at warm-up
    "(EngineCore pid=1632893) ERROR 08-12 04:47:25 [core.py:1349] EngineCore failed to start.",
    "(EngineCore pid=1632893) ERROR 08-12 04:47:25 [core.py:1349] Traceback (most recent call last):",
    '(EngineCore pid=1632893) ERROR 08-12 04:47:25 [core.py:1349]   File "/workspace/meetting-translator/.venv-'
    'translate/lib/python3.11/site-packages/flashinfer/comm/fd_exchange.py", line 55, in <module>',
    "(EngineCore pid=1632893) ERROR 08-12 04:47:25 [core.py:1349]     def _fd_ancillary(fd: int) -> tuple[tuple[int, "
    "int, array.array[int]]]:",
    "(EngineCore pid=1632893) ERROR 08-12 04:47:25 [core.py:1349] TypeError: type 'array.array' is not subscriptable",
    "(APIServer pid=1632500) RuntimeError: Engine core initialization failed. See root cause above. Failed core "
    "proc(s): {}",
]


def test_a_builtin_type_subscripted_at_import_is_a_python_older_than_the_package() -> None:
    report = classify_lines(FLASHINFER)
    assert report.kind == "version_mismatch"
    assert report.findings[0].rule == "python_older_than_package"
    for line in ("TypeError: 'type' object is not subscriptable",
                 "TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'"):
        assert classify_lines([line]).kind == "version_mismatch", line


def test_a_none_subscripted_is_no_python_version() -> None:
    assert classify_lines(["TypeError: 'NoneType' object is not subscriptable"]).kind != "version_mismatch"


# The session's review of this pass: each shape below read wrong as first written.
SERVING = ["INFO 05-01 10:00:00 [api_server.py:1000] Starting vLLM API server on http://0.0.0.0:8000",
           "INFO:     Application startup complete.",
           'INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK']


def test_a_project_class_subscripted_while_serving_is_its_bug_not_python() -> None:
    lines = [*SERVING, "ERROR 05-01 10:01:00 [serving_chat.py:200] Error in preprocessing prompt inputs",
             "Traceback (most recent call last):",
             '  File "/usr/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 198, in '
             "create_chat_completion",
             "    tool_parser = self.tool_parser[request]",
             "TypeError: type 'Hermes2ProToolParser' is not subscriptable"]
    assert classify_lines(lines).kind == "engine_error"


def test_a_warning_that_went_on_without_the_package_is_no_python_version() -> None:
    warning = ("WARNING 05-01 09:59:00 [utils.py:40] Could not import flashinfer sampler (TypeError: type "
               "'array.array' is not subscriptable), falling back to the PyTorch-native implementation")
    assert classify_lines([warning, *SERVING]).kind == "healthy"


def test_typing_constructs_joined_by_a_bar_are_a_python_older_than_the_package() -> None:
    for pair in ("'_GenericAlias' and 'NoneType'", "'_UnionGenericAlias' and 'NoneType'",
                 "'_SpecialForm' and 'NoneType'", "'ABCMeta' and 'NoneType'", "'NoneType' and 'type'"):
        line = f"TypeError: unsupported operand type(s) for |: {pair}"
        assert classify_lines([line]).kind == "version_mismatch", pair
    assert classify_lines(["TypeError: unsupported operand type(s) for |: 'int' and 'str'"]).kind != "version_mismatch"


def test_an_instruction_that_says_what_failed_is_still_a_failure() -> None:
    for line in ("Please make sure the model path is correct: /models/llama could not be found.",
                 "You must upgrade your NVIDIA driver: the installed driver is too old for CUDA 12.4.",
                 "Please wait, the server failed to start, retrying in 5 seconds",
                 "  You must be authenticated to access it: 401 Client Error. Access denied."):
        assert classify_lines([line]).kind != "healthy", line


def test_only_a_printed_finished_request_releases_a_bar_at_zero() -> None:
    ready = NOTEBOOK[:3]
    assert classify_lines([*ready, "Still waiting for the generated text after 600 s, giving up"]
                          ).kind == "slow_or_stalled"
    output = ("RequestOutput(request_id=0, prompt='Hello, my name is', outputs=[CompletionOutput(index=0, "
              "text=' Joel, a software engineer from Ohio', token_ids=[3, 4, 5, 6, 7, 8], cumulative_logprob=None, "
              "logprobs=None, finish_reason=length, stop_reason=None)], finished=True)")
    assert classify_lines([*ready, output]).kind == "healthy"


def test_a_bar_rounded_to_zero_with_prompts_done_is_no_stall() -> None:
    bar = ("Processed prompts:   0%|          | 120/28461 [00:30<1:58:30,  3.93it/s, est. speed input: 745.61 toks/s, "
           "output: 55.48 toks/s]")
    assert classify_lines([NOTEBOOK[0], bar]).kind == "healthy"


def test_a_batch_crawling_after_a_preemption_stays_slowed() -> None:
    crawl = BAR_2.replace("495/28461", "100/512").replace("3.93it/s", "45.20s/it")
    after = BAR_2.replace("495/28461", "101/512").replace("3.93it/s", "47.90s/it")
    assert classify_lines([crawl, PREEMPTED, after]).kind == "slow_or_stalled"


# The second review (of the mends above): each shape below read wrong as the mends first had it.
def test_a_printed_prompts_rules_are_no_failure_sentence() -> None:
    for line in ("You must not answer questions that cannot be answered from the context.",
                 'You should reply with "Unknown" if the answer is not found in the document.',
                 "You must be concise. Invalid JSON is not allowed."):
        assert classify_lines([line]).kind == "healthy", line


def test_a_printed_generated_text_key_releases_a_bar_at_zero() -> None:
    bar = "Processed prompts:   0%|          | 0/4 [00:00<?, ?it/s, est. speed input: 0.00 toks/s]"
    for answer in ("{'prompt': 'Hello, my name is', 'generated_text': ' Joel, my dad'}",
                   '[{"generated_text": "Paris is the capital of France"}]', "Generated text 0: 'Joel'"):
        assert classify_lines([NOTEBOOK[0], bar, answer]).kind == "healthy", answer


def test_a_bar_that_moved_without_a_rate_releases_the_preemption() -> None:
    assert classify_lines([BAR_0, PREEMPTED, "Processed prompts:   2%|▏ | 12/500 [01:30<1:00:00]"]).kind == "healthy"


def test_annotations_joined_by_a_bar_while_serving_are_still_python() -> None:
    lines = [*SERVING, "Traceback (most recent call last):",
             '  File "/usr/lib/python3.9/site-packages/xgrammar/compiler.py", line 12, in <module>',
             "TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'"]
    assert classify_lines(lines).kind == "version_mismatch"
    for pair in ("'_AnnotatedAlias' and 'NoneType'", "'ModelMetaclass' and 'NoneType'", "'TypeVar' and 'NoneType'"):
        assert classify_lines([f"TypeError: unsupported operand type(s) for |: {pair}"]).kind == "version_mismatch"
    # Python 3.8's words for any class subscripted name no Python version while serving
    python38 = [*SERVING, "Traceback (most recent call last):",
                '  File "/srv/app.py", line 3, in handle', "TypeError: 'type' object is not subscriptable"]
    assert classify_lines(python38).kind == "engine_error"
