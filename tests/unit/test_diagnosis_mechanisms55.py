"""The round-55 pass (issue 11: holdout round 55's five false alarms, moved to dev), on the real lines they were
written from, beside the shapes that must keep their reading:

- the rest of a Python warning's message (`RuntimeWarning: Failed to read commit hash:` then `No module named
  'vllm._version'`; huggingface_hub's Colab notice under `UserWarning: `) is no exception raised and no failure
  sentence, while a rule still names what such a warning says (torch's GPU too new for its build);
- a chat template vLLM 0.5 logs line by line at start-up quotes its refusals in its source, which is no refusal;
  a Jinja error, and llama.cpp's error quoting the source before its words, still are;
- vLLM's warning that it has no compiled CUDA extension at all is how a Neuron, Spyre, TPU or CPU build is made,
  while the same warning with no such device named, or an extension that does not load, is still a build fault.
"""

from __future__ import annotations

from chainlit_app.diagnostics import classify_lines

COMMIT_HASH = [  # vLLM 0.6.3 installed from its wheel (vLLM #9421), serving
    "/usr/local/lib/python3.10/dist-packages/vllm/connections.py:8: RuntimeWarning: Failed to read commit hash:",
    "No module named 'vllm._version'",
    "  from vllm.version import __version__ as VLLM_VERSION",
    "INFO 10-16 08:00:00 api_server.py:528] vLLM API server version 0.6.3",
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
]
COLAB_SECRET = [  # a Colab notebook's offline run
    "/usr/local/lib/python3.10/dist-packages/huggingface_hub/utils/_auth.py:94: UserWarning: ",
    "The secret `HF_TOKEN` does not exist in your Colab secrets.",
    "To authenticate with the Hugging Face Hub, create a token in your settings tab "
    "(https://huggingface.co/settings/tokens), set it as secret in your Google Colab and restart your session.",
    "You will be able to reuse this secret in all of your notebooks.",
    "Please note that authentication is recommended but still optional to access public models or datasets.",
    "  warnings.warn(",
    "INFO 12-01 11:54:08 config.py:1861] Downcasting torch.float32 to torch.float16.",
    "Processed prompts: 100%|██████████| 2/2 [00:00<00:00,  3.10it/s, est. speed input: 20.18 toks/s]",
]


def test_the_rest_of_a_warnings_message_is_no_exception() -> None:
    assert classify_lines(COMMIT_HASH).kind == "healthy"
    assert classify_lines(["> " + line for line in COMMIT_HASH]).kind == "healthy"


def test_the_rest_of_a_warnings_message_is_no_failure_sentence() -> None:
    assert classify_lines(COLAB_SECRET).kind == "healthy"


def test_an_exception_line_of_its_own_is_still_one() -> None:
    lines = ["INFO 10-16 08:00:00 api_server.py:528] vLLM API server version 0.6.3",
             "ModuleNotFoundError: No module named 'transformers_stream_generator'"]
    assert classify_lines(lines).kind != "healthy"
    assert classify_lines([COMMIT_HASH[0], "  from vllm.version import __version__", lines[1]]).kind != "healthy"


def test_a_rule_still_names_what_a_warning_says() -> None:
    lines = ["/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:287: UserWarning: ",
             "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
             "installation.",
             "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90."]
    assert classify_lines(lines).kind == "version_mismatch"


TEMPLATE = [  # vLLM 0.5.0 on AWS Inferentia2, the default chat template logged as it starts
    "INFO 09-23 00:09:22 serving_chat.py:92] Using default chat template:",
    "INFO 09-23 00:09:22 serving_chat.py:92] {%- for message in loop_messages %}",
    "INFO 09-23 00:09:22 serving_chat.py:92]     {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}",
    "INFO 09-23 00:09:22 serving_chat.py:92]         {{- raise_exception('After the optional system message, "
    "conversation roles must alternate user/assistant/user/assistant/...') }}",
    "INFO 09-23 00:09:22 serving_chat.py:92]     {%- endif %}",
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
]


def test_a_logged_templates_source_is_no_refusal() -> None:
    assert classify_lines(TEMPLATE).kind == "healthy"


def test_a_templates_refusal_is_still_one() -> None:
    jinja = "jinja2.exceptions.TemplateError: Conversation roles must alternate user/assistant/user/assistant/..."
    assert classify_lines([*TEMPLATE, jinja]).kind == "chat_template"
    llama_cpp = ('srv    operator(): got exception: {"error":{"code":500,"message":"\\n------------\\nWhile executing '
                 "CallExpression at line 19, column 27 in source:\\n...% 2 == 0) -%}↵        {{ raise_exception("
                 '\\"Conversation roles must alternate user...\\nError: Jinja Exception: Conversation roles must '
                 'alternate user/assistant/user/assistant/...","type":"server_error"}}')
    assert classify_lines([llama_cpp]).kind == "chat_template"


NO_EXTENSION = ("WARNING 09-23 00:07:19 _custom_ops.py:11] Failed to import from vllm._C with "
                "ModuleNotFoundError(\"No module named 'vllm._C'\")")
NEURON = [
    NO_EXTENSION,
    "INFO 09-23 00:07:22 api_server.py:177] vLLM API server version 0.5.0",
    "INFO 09-23 00:07:22 api_server.py:178] args: Namespace(host=None, port=8000, device='neuron', "
    "max_num_seqs=4)",
    "WARNING 09-23 00:07:23 utils.py:456] Pin memory is not supported on Neuron.",
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    'INFO:     10.0.99.182:33646 - "GET /v1/models HTTP/1.1" 200 OK',
]


def test_no_cuda_extension_on_a_neuron_server_is_how_it_is_built() -> None:
    assert classify_lines(NEURON).kind == "healthy"


def test_no_cuda_extension_with_no_other_device_named_is_still_a_build_fault() -> None:
    assert classify_lines([NO_EXTENSION, *NEURON[3:]]).kind == "version_mismatch"
    broken = ("WARNING 05-10 10:00:00 _custom_ops.py:14] Failed to import from vllm._C with "
              "ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')")
    assert classify_lines([broken, *NEURON[1:]]).kind == "version_mismatch"


# A review of the pass: a warning's lines never hide what follows them
KEY_ERROR = "KeyError: 'model.layers.0.mlp.gate_up_proj.qweight'"


def test_a_failure_after_a_warnings_lines_is_still_read() -> None:
    header, rest, source = COMMIT_HASH[:3]
    for after in ([f"[rank0]: {KEY_ERROR}"], ["", KEY_ERROR], [source.strip(), KEY_ERROR],
                  [source.strip(), "Segmentation fault (core dumped)"],
                  ["\x1b[1;31mERROR\x1b[0m 10-16 08:00:01 engine.py:100] RuntimeError: CUDA error: out of memory"]):
        assert classify_lines([header, rest, *after]).kind != "healthy", after
    ranked = ["[rank0]: " + line for line in [header, rest, source, "Traceback (most recent call last):",
                                                '  File "/x/vllm/worker.py", line 123, in load_model', KEY_ERROR]]
    assert classify_lines(ranked).kind != "healthy"


def test_a_process_tagged_warnings_lines_and_a_trimmed_header_are_read_as_the_warnings() -> None:
    tagged = ["(EngineCore_DP0 pid=9) " + line for line in COMMIT_HASH[:3]]
    assert classify_lines(tagged).kind == "healthy"
    assert classify_lines([line.rstrip() for line in COLAB_SECRET]).kind == "healthy"


def test_a_tensor_on_the_cpu_is_no_device_without_the_extension() -> None:
    lines = [NO_EXTENSION, "INFO 09-23 00:07:22 llm_engine.py:161] Initializing an LLM engine (v0.5.0) with config: "
             "model='m', device_config=cuda, seed=0",
             "INFO 09-23 00:07:30 model_runner.py:1] pinned buffer: Tensor(shape=[4096], device='cpu')"]
    assert classify_lines(lines).kind == "version_mismatch"
