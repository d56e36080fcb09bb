"""The general mechanisms that named round 10's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the healthy shape beside it, so that a mechanism that fires
on everything fails here."""

from __future__ import annotations

import json

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answers import judge_answer, judge_body
from chainlit_app.diagnostics.chat_observations import from_answer
from chainlit_app.diagnostics.known_architectures import KNOWN_ARCHITECTURES
from chainlit_app.diagnostics.rule_tables import RULES_BY_ID
from chainlit_app.diagnostics.thinking import split_thinking

# vllm-ascend #12568: Qwen3-32B W4A4's answer opens with an empty thinking prefix that is never closed
THINK_PREFIX = ("<think>\n\n\n我是通义千问，由通义实验室研发的超大规模语言模型。我能够回答问题、创作文字，"
                "如写故事、公文、邮件、剧本等，还能进行逻辑推理、编程，以及表达观点，玩游戏等。")
BODY = {"id": "chatcmpl-84708150b5f14a56", "object": "chat.completion", "model": "qwen3-32b",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": THINK_PREFIX, "tool_calls": [],
                                             "reasoning": None}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "total_tokens": 128, "completion_tokens": 117}}


def test_an_answer_after_an_unclosed_thinking_prefix_is_not_empty() -> None:
    assert judge_body(BODY) is None
    assert judge_answer(THINK_PREFIX, "stop", 117) is None
    assert from_answer(THINK_PREFIX, "stop", 117) == []  # the chat's own answers go through the same judge
    assert [f.kind for f in from_answer("<think>\n\n</think>", "stop", 12)] == ["empty_output"]
    assert classify_lines([json.dumps(BODY, ensure_ascii=False)]).kind == HEALTHY
    visible, thinking = split_thinking(THINK_PREFIX, "stop")
    assert visible.strip().startswith("我是通义千问") and thinking == ""
    # still empty: a closed block and nothing after it (xinference #3767), or thinking cut at the length limit
    closed = judge_answer("<think>\n\n</think>", "stop", 12)
    assert closed is not None and closed.kind == "empty_output"
    cut = judge_answer("<think>\nLet me work out the user's question step by step", "length", 256)
    assert cut is not None and cut.kind == "empty_output"
    assert split_thinking("<think>a</think>\n\nHello.", "stop") == ("\n\nHello.", "<think>a</think>")


def test_a_wrapper_that_quotes_its_cause_is_named_by_the_cause() -> None:
    line = ("VllmWorkerProcess pid=214) ERROR 09-27 05:20:38 multiproc_worker_utils.py:233] Exception in worker "
            "VllmWorkerProcess while processing method determine_num_available_blocks: CUDA out of memory. Tried "
            "to allocate 19.63 GiB. GPU 3 has a total capacity of 79.15 GiB of which 17.73 GiB is free.")  # vLLM #8903
    report = classify_lines([line])
    assert report.kind == "out_of_memory" and report.root is not None and report.root.rule == "gpu_oom"
    # the wrapper alone still names the start-up failure it reports
    bare = "ERROR 09-27 05:20:38 multiproc_worker_utils.py:233] Exception in worker VllmWorkerProcess"
    assert classify_lines([bare]).kind == "startup_failure"


def test_each_new_rule_matches_its_real_lines() -> None:
    for rule_id in ("arch_in_later_release", "plain_value_for_vllm_object", "model_name_not_registered",
                    "model_actor_oom", "content_parts_joined_as_text"):
        rule = RULES_BY_ID[rule_id]
        assert rule.examples and all(rule.pattern.search(example) for example in rule.examples), rule_id


def test_an_unsupported_architecture_is_read_by_whether_a_later_vllm_has_it() -> None:
    assert {"InternVLChatModel", "DeepseekV3ForCausalLM", "Qwen2VLForConditionalGeneration"} <= KNOWN_ARCHITECTURES
    for arch in ("InternVLChatModel", "DeepseekV3ForCausalLM", "Qwen2VLForConditionalGeneration"):
        line = f"ValueError: Model architectures ['{arch}'] are not supported for now. Supported architectures: []"
        assert classify_lines([line]).kind == "version_mismatch", arch
    # a custom class no vLLM implements (vLLM #32338), and a list mixing one in: no release serves the model
    for archs in ("'LlavaQwenForCausalLM'", "'Qwen2ForCausalLM', 'MyCustomForCausalLM'"):
        line = f"ValueError: Model architectures [{archs}] are not supported for now."
        assert classify_lines([line]).kind == "startup_failure", archs


def test_plain_values_passed_to_vllm_objects_are_another_release() -> None:
    lines = [
        "(ServeReplica:default:VLLMDeployment pid=1328933) Traceback (most recent call last):",
        '(ServeReplica:default:VLLMDeployment pid=1328933)   File "/root/venv/lib/python3.11/site-packages/vllm/'
        'entrypoints/openai/serving_engine.py", line 665, in <genexpr>',
        "(ServeReplica:default:VLLMDeployment pid=1328933)     return any(model.name == model_name for model in "
        "self.base_model_paths)",
        "(ServeReplica:default:VLLMDeployment pid=1328933) AttributeError: 'str' object has no attribute 'name'",
    ]
    assert classify_lines(lines).kind == "version_mismatch"
    # the same words raised in the user's own code are not vLLM refusing a value
    own = ['Traceback (most recent call last):', '  File "/home/me/app.py", line 3, in <module>',
           "    print(x.name)", "AttributeError: 'str' object has no attribute 'name'"]
    assert classify_lines(own).kind != "version_mismatch"


def test_serving_layers_words() -> None:
    kserve = ["INFO 03-28 14:40:34 serving_models.py:174] Loaded new LoRA adapter: name 'llama_adapter', path "
              "'/mnt/large_models/test-finetuned-model/'", "{", '    "error": "Model with name llama_adapter does '
              'not exist."', "}"]
    assert classify_lines(kserve).kind == "model_not_found"
    assert classify_lines(["2024-01-18 21:27:53,300 xinference.core.model 35043 ERROR    Model actor is out of "
                           "memory."]).kind == "out_of_memory"
    assert classify_lines(['can only concatenate str (not \\"list\\") to str']).kind == "chat_template"
    # the adapter loading alone is healthy
    assert classify_lines(kserve[:1]).kind == HEALTHY
