"""The general mechanisms that named round 8's misses (threads in tests/data/logs/dev/SOURCES.md, last section),
each on the real lines it was written from and on the healthy shape beside it, so that a mechanism that fires
on everything fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chainlit_app.diagnostics import HEALTHY, LineClassifier, classify_file, classify_lines
from chainlit_app.diagnostics.answer_loops import is_looping, tiny_vocabulary_run
from chainlit_app.diagnostics.answers import judge_answer
from chainlit_app.diagnostics.byte_pieces import shows_byte_pieces
from chainlit_app.diagnostics.lineformat import parse_line
from chainlit_app.diagnostics.unfinished_start import STEPS, StartStep, step_of

# vllm-metal #316: the completion text as the server returned it
BYTE_PIECES = ("ĠI'mĠtryingĠtoĠunderstandĠsomeĠmathĠconcepts.ĠIĠcameĠacrossĠthisĠproblem:Ġ\"FindĠallĠrealĠnumbers"
               "ĠxĠsuchĠthatĠx^2Ġ+Ġ1Ġ=Ġ0.\"ĠHmm,Ġokay,ĠsoĠIĠneedĠtoĠsolveĠforĠxĠinĠtheĠequationĠxĠsquaredĠplus")
# verl #1013: a rollout worker's print of what the model generated, behind Ray's tag
ROLLOUT = ("(main_task pid=360402) Let's think step by step. camin camin naman naman naman naman camin naman camin "
           "naman camin naman camin naman করিনি camin camin naman camin naman camin naman camin naman camin naman "
           "camin naman camin camin camin camin camin camin camin camin camin camin naman camin camin camin naman")
RAYLET = ("core_worker.cc:514: Failed to register worker to Raylet: IOError: [RayletClient] Unable to register worker "
          "with raylet. Failed to read data from the socket: End of file worker_id=01000000ffffffffffffffffffffff")
SERVE_JSON = json.dumps({
    "levelname": "WARNING", "asctime": "2024-03-24 03:17:59,398", "component_name": "controller",
    "message": "deployment_state.py:2152 - Deployment 'VLLMDeployment:amazon--LightGPT' in application 'ray-llm' "
               "1 replicas that have taken more than 30s to be scheduled. This may be due to waiting for the cluster "
               "to auto-scale or for a runtime environment to be installed. Resources required for each replica: "
               "[{\"CPU\": 1.0, \"GPU\": 0.1}], total resources available: {}. Use `ray status` for more details."})
# vLLM #20891: the engine core's last three lines, then 3.5 hours of nothing
LOAD_STARTED = ["(EngineCore pid=115) Initializing a V1 LLM engine (v0.18.0) ...",
                "(EngineCore pid=115) world_size=1 rank=0 ... backend=nccl",
                "(EngineCore pid=115) Starting to load model unsloth/Qwen3-VL-32B-Instruct-bnb-4bit..."]


def test_byte_level_pieces_are_a_decode_error() -> None:
    report = classify_lines([BYTE_PIECES])
    assert report.kind == "decode_error" and report.root is not None
    assert report.root.rule == "byte_level_pieces" and "detokenizer" in report.root.hint
    verdict = judge_answer(BYTE_PIECES, "length", 64)  # the same text as a chat answer or a body
    assert verdict is not None and verdict.kind.value == "decode_error" and "detokenizer" in verdict.hint
    # text about tokenizers quotes a few markers between real spaces; a short fragment names nothing
    about = "In GPT-2's vocabulary 'Ġthe' and 'Ġand' are pieces whose 'Ġ' marks a space, and 'Ċ' a newline; 'ĠĠ' two."
    assert not shows_byte_pieces(about) and judge_answer(about, "stop", 30) is None
    assert not shows_byte_pieces("ĠaĠb")


def test_a_run_on_a_tiny_vocabulary_loops_wherever_it_stands() -> None:
    irregular = "The answer is: " + "camin naman naman camin naman camin camin naman " * 4 + "so"
    assert tiny_vocabulary_run(irregular.split()) and is_looping(irregular)
    verdict = judge_answer(irregular, "length", 64)
    assert verdict is not None and verdict.kind.value == "degenerate_output"
    assert tiny_vocabulary_run(["|", "|", "|ــ", "|"] * 8)  # the whole-text case is a window as well
    healthy = ("Paris is the capital of France. It lies on the Seine, and it has been the centre of French "
               "political life for centuries; its museums, cafés and bridges draw millions of visitors every year.")
    assert not tiny_vocabulary_run(healthy.split()) and judge_answer(healthy, "length", 40) is None
    assert not tiny_vocabulary_run(("0 1 " * 20).split())  # digits alone: a matrix someone asked for
    assert not tiny_vocabulary_run(("| --- " * 20).split())  # a table's rule line


def test_a_processs_tagged_print_is_judged_as_an_answer() -> None:
    report = classify_lines([ROLLOUT])
    assert report.kind == "degenerate_output" and report.root is not None
    assert report.root.rule == "tagged_print_loops"
    # every worker of a tensor-parallel group prints the same line: tagged prints are not counted together
    nccl = "NCCL version 2.21.5+cuda12.4 loaded for this worker process on this node"
    same = [f"(VllmWorker rank={r} pid={100 + r}) {nccl}" for r in range(8)]
    assert classify_lines(same).kind == HEALTHY
    # a logged line behind the tag is no print
    logged = "(EngineCore pid=1) INFO 05-15 16:03:46 [vllm.py:844] " + "Asynchronous scheduling is enabled. " * 3
    assert classify_lines([logged]).kind == HEALTHY


def test_rays_scheduler_waiting_for_resources_is_a_slow_start() -> None:
    report = classify_lines([SERVE_JSON])
    assert report.kind == "slow_or_stalled" and report.root is not None
    assert report.root.rule == "ray_resources_unavailable" and report.root.role == "weak"
    assert classify_lines(['{"levelname": "INFO", "asctime": "2024-03-24 03:18:59,398", "message": '
                           '"Deployment \'VLLMDeployment:amazon--LightGPT\' is HEALTHY."}']).kind == HEALTHY


def test_an_error_of_rays_cpp_core_at_start_up_is_a_start_up_failure() -> None:
    report = classify_lines([RAYLET])
    assert report.kind == "startup_failure" and report.root is not None and report.root.rule == "ray_core_error"
    glog = ("[2026-03-03 21:12:46,736 E 46008 46008] core_worker_process.cc:232: Failed to register worker to "
            "Raylet: IOError: Failed to read data from the socket: End of file")
    assert parse_line(glog).level == "ERROR" and parse_line(glog).message.startswith("core_worker_process.cc:232")
    assert classify_lines([glog]).kind == "startup_failure"
    info = "[2026-03-03 21:12:16,599 I 46008 46008] core_worker.cc:215: Constructing CoreWorker. worker_id=01000000ff"
    assert parse_line(info).level == "INFO" and classify_lines([info]).kind == HEALTHY
    # any line the core logs at level E while starting, under the tag of Ray's component; not the signal handler's
    tagged = "(pid=gcs_server) [2026-03-03 21:12:16,599 E 1 1] gcs_server.cc:95: GCS could not reach its storage"
    report = classify_lines([tagged])
    assert report.root is not None and (report.kind, report.root.rule) == ("startup_failure", "ray_core_error_line")
    crash = "[2024-02-27 16:09:19,106 E 19394 19394] logging.cc:361: *** SIGSEGV received at time=1709021359 ***"
    assert classify_lines([crash]).root.rule != "ray_core_error_line"  # type: ignore[union-attr]
    warning = "(raylet) [2026-03-03 21:12:16,599 W 1 1] node_manager.cc:95: the node is low on disk space"
    assert classify_lines([warning]).kind == HEALTHY
    # once the server serves, the same failure is not a start-up's
    serving = ["INFO:     Application startup complete.", glog]
    assert classify_lines(serving).kind == "engine_error"


def test_the_kv_cache_printed_below_zero_is_out_of_memory() -> None:
    profile = ("INFO 02-26 09:54:05 worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch "
               "activation peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB.")
    assert classify_lines([profile]).kind == "out_of_memory"
    assert classify_lines(["INFO 02-26 09:54:05 executor_base.py:111] # cuda blocks: 0, # CPU blocks: 4681"]
                          ).kind == "out_of_memory"
    # no swap space is healthy, and so is a positive KV cache
    assert classify_lines(["INFO 03-21 20:15:46 executor_base.py:111] # cuda blocks: 7191, # CPU blocks: 0"]
                          ).kind == HEALTHY
    assert classify_lines([profile.replace("-1.05", "2.31")]).kind == HEALTHY


def test_a_stack_through_v0s_detokenizer_is_serving() -> None:
    frames = [
        'ERROR 11-05 20:58:45 engine.py:147]   File "/w/vllm/engine/output_processor/single_step.py", line 122, in '
        "_process_sequence_group_outputs",
        "ERROR 11-05 20:58:45 engine.py:147]     new_char_count = self.detokenizer.decode_sequence_inplace(",
        'ERROR 11-05 20:58:45 engine.py:147]   File "/w/vllm/transformers_utils/detokenizer.py", line 117, in '
        "decode_sequence_inplace",
        "ERROR 11-05 20:58:45 engine.py:147]     seq.read_offset) = convert_prompt_ids_to_tokens(",
    ]  # vLLM #10051, the excerpt cut before its exception line
    report = classify_lines(frames)
    assert report.kind == "decode_error" and report.root is not None and report.root.basis == "raised_in"


# --- the unfinished start: file-level only -----------------------------------------------------------


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.id)
def test_each_start_step_is_read_from_its_real_lines(step: StartStep) -> None:
    assert step.examples
    for example in step.examples:
        assert step_of(example) is step
        report = classify_lines(["INFO 05-11 04:13:20 [__init__.py:239] Automatically detected platform cuda.",
                                 example])
        assert report.kind == "slow_or_stalled" and report.root is not None
        assert (report.root.rule, report.root.basis, report.root.role, report.root.line) == (step.id, "phase", "weak",
                                                                                             2)


def test_an_unfinished_start_is_named_only_on_a_whole_log(tmp_path: Path) -> None:
    assert classify_lines(LOAD_STARTED).kind == "slow_or_stalled"
    path = tmp_path / "engine.log"
    path.write_text("\n".join(LOAD_STARTED) + "\n\n")
    assert classify_file(path).kind == "slow_or_stalled"  # the CLI's reading; blank lines at the end do not count
    # the live monitor's path: a server that is starting always ends on the step it is doing
    live = LineClassifier()
    found = [f for n, line in enumerate(LOAD_STARTED, 1) for f in live.feed(line, n)] + live.finish()
    assert found == []
    # the last lines of a process that exited: the exit is the cause, not a stall
    assert classify_lines(LOAD_STARTED, excerpt=False).kind == HEALTHY


def test_a_start_that_went_on_or_failed_otherwise_is_not_unfinished() -> None:
    done = [*LOAD_STARTED, "(EngineCore pid=115) INFO 05-11 04:13:30 [default_loader.py:278] Loading weights took "
            "3.86 seconds"]
    assert classify_lines(done).kind == HEALTHY
    # healthy start-up excerpts end before serving too, on a step that does not hang
    waiting = ["INFO 09-03 16:28:17 [__init__.py:744] Resolved architecture: Qwen2ForCausalLM",
               "INFO 09-03 16:28:23 [core.py:648] Waiting for init message from front-end."]
    assert classify_lines(waiting).kind == HEALTHY
    served = ["INFO:     Application startup complete.", LOAD_STARTED[2]]
    assert classify_lines(served).kind == HEALTHY
    failed = ["ERROR 05-11 04:13:20 [core.py:700] EngineCore failed to start.", LOAD_STARTED[2]]
    report = classify_lines(failed)
    assert report.kind == "startup_failure" and all(f.basis != "phase" or f.kind != "slow_or_stalled"
                                                     for f in report.findings)
    assert classify_lines(["Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:15<00:00,  3.9s/it]"]
                          ).kind == HEALTHY
