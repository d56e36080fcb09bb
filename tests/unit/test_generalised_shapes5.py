"""The general mechanisms that named round 5's misses (the threads are in tests/data/logs/dev/SOURCES.md),
each on its real line and on the healthy shape next to it, so that a mechanism that fires on everything
fails here."""

from __future__ import annotations

import json

from chainlit_app.diagnostics import HEALTHY, classify_lines
from chainlit_app.diagnostics.answer_loops import writes_next_turns


def _stats(running: int, waiting: int, prompt: float, gen: float) -> str:
    return (f"INFO 11-21 00:12:13 llm_engine.py:624] Avg prompt throughput: {prompt} tokens/s, Avg generation "
            f"throughput: {gen} tokens/s, Running: {running} reqs, Swapped: 0 reqs, Pending: {waiting} reqs, "
            "GPU KV cache usage: 27.1%, CPU KV cache usage: 0.0%")


def test_clients_own_words_for_an_empty_answer() -> None:
    assert classify_lines(['<Bot> full response to system: ""']).kind == "empty_output"  # mindcraft #789
    assert classify_lines(["[INFO] agent: LLM response without tool calls (direct answer) {iteration=1, "
                           "content_chars=0, agent_id=main}"]).kind == "empty_output"  # picolm #15
    assert classify_lines(["WARNING Rollout error: EmptyModelResponseError('Model returned no content')"]
                          ).kind == "empty_output"  # prime-rl #2316
    # the healthy shapes beside them: an answer with text, a JSON key with an empty string (a stream's first
    # delta), a non-zero count
    assert classify_lines(['<Bot> full response to system: "Sure, on my way."']).kind == HEALTHY
    assert classify_lines(['data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}']
                          ).kind == HEALTHY
    assert classify_lines(["agent: LLM response {iteration=1, content_chars=120}"]).kind == HEALTHY


def test_other_servers_words_for_a_port_and_a_connection() -> None:
    llama_cpp = "main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080"  # Sakura launcher #71
    assert classify_lines([llama_cpp]).kind == "port_in_use"
    assert classify_lines(["Couldn't connect to Ollama at http://127.0.0.1:11434"]).kind == "connection"
    assert classify_lines(["main: HTTP server is listening, hostname: 127.0.0.1, port: 8080"]).kind == HEALTHY
    assert classify_lines(["Error: 404 page not found"]).kind == "model_not_found"  # Go's net/http: a wrong path
    assert classify_lines(['INFO:     127.0.0.1:5 - "GET /favicon.ico HTTP/1.1" 404 Not Found']).kind == HEALTHY


def test_an_answer_that_writes_the_users_next_turn_loops_across_turns() -> None:
    text = ("Hello! How can I assist you today?\nUSER:What is the meaning of life?\nASSISTANT:\nThe meaning of "
            "life is a philosophical question.\nUSER:What is the best w")  # LocalAI #4716, cut as posted
    def body(finish: str) -> str:
        choice = {"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}
        return json.dumps({"object": "chat.completion", "choices": [choice]})

    assert classify_lines([body("")]).kind == "degenerate_output"
    assert writes_next_turns(text)
    # a dialogue the user asked for ends on its stop token; a label at the very start is the answer's own
    assert classify_lines([body("stop")]).kind == HEALTHY
    assert not writes_next_turns("USER: hi\nASSISTANT: hello")
    assert not writes_next_turns("Ask the user: what is the goal?\nThen the assistant answers.")


def test_decoding_that_starves_behind_prefills_is_a_stall() -> None:
    starved = [_stats(20, 9, 0.0, 122.2), _stats(22, 7, 1032.4, 0.0), _stats(24, 5, 1096.2, 0.0)]  # vLLM #1734
    report = classify_lines(starved)
    assert report.kind == "slow_or_stalled" and report.root is not None and report.root.line == 3
    # one report of prefills only (a burst arrived) and then tokens again: healthy
    assert classify_lines([_stats(20, 9, 1032.4, 0.0), _stats(24, 0, 0.0, 300.0)] * 2).kind == HEALTHY
    # prefills with nothing waiting: the queue was admitted at once
    assert classify_lines([_stats(8, 0, 900.0, 0.0)] * 3).kind == HEALTHY


def test_an_engine_that_died_while_serving_is_named_so_though_the_server_then_stopped() -> None:
    lines = [
        "ERROR 12-01 13:05:02 client.py:282] RuntimeError('Engine process (pid 76) died.')",  # vLLM #10812
        "ERROR 12-01 13:05:02 client.py:282] NoneType: None",
        "CRITICAL 12-01 13:05:02 launcher.py:99] MQLLMEngine is already dead, terminating server process",
        'INFO:     10.42.0.118:60606 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error',
        "INFO:     Shutting down",
    ]
    report = classify_lines(lines)
    assert report.kind == "engine_error" and report.root is not None and report.root.line == 2
    # an unrecognised error line, then the stop of a server that never served: a start-up failure still
    assert classify_lines([lines[1], "INFO:     Shutting down"]).kind == "startup_failure"
    # the launcher writes only while serving: the unrecognised line before it is settled as an engine error
    assert classify_lines(lines[1:3]).kind == "engine_error"


def test_ollamas_own_answer_shape_is_judged_as_an_answer() -> None:
    empty = '{"message":{"role":"assistant","content":""},"eval_count":1,"done_reason":"stop","done":true}'
    assert classify_lines([empty]).kind == "empty_output"  # ollama #17823's shape
    elided = '{"message":{"role":"assistant","content":""}, ..., "eval_count":1, "done_reason":"stop"}'
    assert classify_lines([elided]).kind == "empty_output"  # as posted, with '...'
    assert classify_lines(['{"model":"m","response":"","done":true,"done_reason":"length"}']).kind == "empty_output"
    assert classify_lines([empty.replace('""', '"Paris"')]).kind == HEALTHY
    # loading a model answers an empty request with no text: that is right (ollama #6012's done_reason 'load')
    assert classify_lines(['{"model":"m","response":"","done":true,"done_reason":"load"}']).kind == HEALTHY
    # an answer's fields printed one per line (oh-my-pi #2774)
    assert classify_lines(['content: ""', 'finish_reason: "length"']).kind == "empty_output"
    assert classify_lines(['content: "Canberra"', 'finish_reason: "stop"']).kind == HEALTHY


def test_other_servers_timings_show_a_crawl() -> None:
    slow = "       eval time =   26581.48 ms /    10 tokens ( 2658.15 ms per token,     0.38 tokens per second)"
    assert classify_lines([slow]).kind == "slow_or_stalled"  # llama.cpp #10054
    fast = "       eval time =   23038.87 ms /   275 tokens (   83.78 ms per token,    11.94 tokens per second)"
    assert classify_lines([fast]).kind == HEALTHY
    # the prompt's own timing is not generation
    assert classify_lines(["prompt eval time =  7164.75 ms /  2 tokens ( 3582.37 ms per token, 0.28 tokens per second)"]
                          ).kind == HEALTHY


def test_an_empty_answer_whose_reasoning_is_broken_is_judged_by_its_reasoning() -> None:
    def body(reasoning: str, finish: str) -> str:
        message = {"role": "assistant", "content": None, "reasoning": reasoning}
        return json.dumps({"object": "chat.completion", "choices": [{"message": message, "finish_reason": finish}]})

    salad = " Factoryَت estadoun разве inform东东 gesta standalone cenderungeted spolu ужа jornada總統 Tokio人には"
    assert classify_lines([body(salad, "length")]).kind == "decode_error"  # vLLM #38077's shape
    loop = "Let me check the file again. " * 40
    assert classify_lines([body(loop, "length")]).kind == "degenerate_output"
    # readable reasoning and no content: the reasoning parser took the answer (an empty answer, as before)
    assert classify_lines([body("The capital of Australia is Canberra.", "stop")]).kind == "empty_output"


def test_unknown_tokens_and_odd_symbols_printed_alone_are_garbled() -> None:
    assert classify_lines(["<unk>" * 31]).kind == "decode_error"  # ollama #5641
    assert classify_lines(["@" * 31]).kind == "decode_error"
    # banners and rules drawn with symbols are not answers
    assert classify_lines(["=" * 40, "Results", "-" * 40, "*" * 40]).kind == HEALTHY
    assert classify_lines(["The tokenizer maps missing pieces to <unk> and pads with <pad>."]).kind == HEALTHY
