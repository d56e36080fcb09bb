"""The general mechanisms of the round-26 pass (issue 11: the misses of holdout round 26, moved to dev), each on
the real lines it was written from and each beside the shape that must keep its reading.

A parser name argparse refuses (releases add tool-call and reasoning parsers per model family), torch.fx refusing
to erase a node a compile pass still needs, and a model family's refusal that lists its versions without naming the
one it got (releases before 0.10 printed no version).
"""

from __future__ import annotations

from chainlit_app.diagnostics import HEALTHY, classify_lines


def _root(lines: list[str]) -> tuple[str, str]:
    report = classify_lines(lines)
    return report.kind, report.root.rule if report.root else ""


def test_a_parser_name_this_release_lacks_is_a_later_release() -> None:
    # zai-org/GLM-4.5 #54: GLM-4.5's own instructions on vLLM 0.10.0 (glm45 came in 0.10.1)
    lines = ["INFO 08-18 13:26:22 [__init__.py:235] Automatically detected platform cuda.",
             "usage: vllm serve [model_tag] [options]",
             "vllm serve: error: argument --tool-call-parser: invalid choice: 'glm45' (choose from 'deepseek_v3', "
             "'glm4_moe', 'granite-20b-fc', 'granite', 'hermes', 'hunyuan_a13b', 'internlm')"]
    assert _root(lines) == ("version_mismatch", "parser_of_a_later_release")
    reasoning = lines[2].replace("--tool-call-parser", "--reasoning-parser")
    assert _root([reasoning]) == ("version_mismatch", "parser_of_a_later_release")
    # another choice list stays a bad argument (vLLM PR #7545: the CLI's load formats lagged the engine's)
    load_format = ("vllm serve: error: argument --load-format: invalid choice: 'sharded_state' (choose from 'auto', "
                   "'pt', 'safetensors', 'npcache', 'dummy', 'tensorizer', 'bitsandbytes')")
    assert _root([load_format]) == ("startup_failure", "bad_argument")


def test_torch_fx_refusing_to_erase_a_used_node_is_a_compile_pass_that_does_not_fit() -> None:
    # unslothai/unsloth #4841: vLLM 0.19 compiling unsloth's patched model (vLLM 0.18 or enforce_eager work)
    line = ("RuntimeError: Tried to erase Node size_1 but it still had 2 users in the graph: {getitem_3: None, "
            "getitem_4: None}!")
    assert _root([line]) == ("version_mismatch", "compile_pass_breaks_graph")
    # a healthy start's compile lines stay quiet
    assert classify_lines(["INFO 03-01 10:00:00 [monitor.py:34] torch.compile takes 54.73 s in total",
                           "INFO 03-01 10:00:01 [backends.py:215] Compiling a graph for dynamic shape takes 40.12 s"]
                          ).kind == HEALTHY


def test_a_refusal_that_names_no_version_is_the_newer_model() -> None:
    # MiniCPM-V-CookBook #7: MiniCPM-V 4 on a release that lists 2.0, 2.5 and 2.6 and prints no version
    line = "ValueError: Currently, MiniCPMV only supports versions 2.0, 2.5, and 2.6"
    assert _root([line]) == ("version_mismatch", "model_version_above_supported")
    # with the version printed, one between the listed ones is still a checkpoint no release serves
    between = "ValueError: Currently, MiniCPMV only supports versions 2.0, 2.5, 2.6, 4.0. Got version: (2, 7)"
    assert _root([between])[0] != "version_mismatch"
