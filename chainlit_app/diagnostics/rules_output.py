"""Rules for answers that came back unreadable or empty while serving (part of `rules_serving.SERVING_RULES`,
between its request-level rules and its connection and stall rules: that order is part of the result).

Data only: see `rules.py` for what the fields mean and how the winner is chosen.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .rules import Rule, rule
from .taxonomy import Kind

OUTPUT_RULES: tuple[Rule, ...] = (
    # --- output that cannot be read ---
    rule(
        "locale_codec_decode",
        Kind.DECODE_ERROR,
        # UTF-8 bytes read with the system's locale encoding, not with UTF-8: GBK on Chinese Windows (and a zh_CN.GBK
        # Linux), cp1252 ('charmap') on Western Windows, ASCII under a bare C locale. Python's open() without
        # encoding= takes the locale's; the bytes are fine, the reading is not (before `unicode_decode`: a tie goes
        # to the earlier rule)
        r"'(?:gbk|gb2312|gb18030|cp936|cp950|big5|cp932|shift_jis|euc_jp|cp949|euc_kr|cp125\d|charmap|ascii)' "
        r"codec can't decode byte",
        hint=Msg("rule.locale_codec_decode"),
        examples=(  # CPython's own words (tests/unit/test_locale_codec.py reads a UTF-8 file under a real GBK locale)
            "UnicodeDecodeError: 'gbk' codec can't decode byte 0xad in position 2: illegal multibyte sequence",
            "UnicodeDecodeError: 'ascii' codec can't decode byte 0xe4 in position 0: ordinal not in range(128)",
        ),
    ),
    rule(
        "unicode_decode",
        Kind.DECODE_ERROR,
        r"UnicodeDecodeError|codec can't decode byte|invalid continuation byte",
        hint=Msg("rule.unicode_decode"),
        examples=(
            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xf8 in position 0: invalid start byte",
        ),
    ),
    rule(
        "detokenizer_invalid_prefix",
        Kind.DECODE_ERROR,
        r"Invalid prefix encountered",
        hint=Msg("rule.detokenizer_invalid_prefix"),
        examples=("Exception: Invalid prefix encountered while decoding stream. Token ID: 237167",),
    ),
    # Any server's detokenizer refusing a sampled id (beyond the tokenizer's vocabulary: a padded embedding
    # row was sampled): vLLM-compatible servers and routers word it alike.
    rule(
        "token_id_not_decodable",
        Kind.DECODE_ERROR,
        # (not vLLM's 'Token id N is out of vocabulary': a prompt's ids a client sent, checked before generation)
        r"unknown token id\b|decoding failed: (?:unknown|invalid) token|"
        # HF tokenizers' words when an id past its vocabulary came back as None from id_to_token
        r"argument 'tokens': 'NoneType' object cannot be converted to 'PyString'",
        hint=Msg("rule.token_id_not_decodable"),
        examples=("ERROR vllm_server completions.rs:411 completion stream failed error=tokenizer error: decoding "
                  "failed: unknown token ID: 248257",
                  # LeoLM's discussion #4 on Hugging Face (a tokenizer of 32,002 ids, an embedding of 32,128 rows)
                  "TypeError: argument 'tokens': 'NoneType' object cannot be converted to 'PyString'"),
    ),
    rule(
        "detokenizer_reset",
        Kind.DECODE_ERROR,
        r"Encountered invalid prefix detokenization error",
        role="weak",
        hint=Msg("rule.detokenizer_reset"),
        examples=(
            "WARNING Encountered invalid prefix detokenization error for request x, resetting decode stream",
        ),
    ),
    rule(
        "logged_output_garbled",
        Kind.DECODE_ERROR,
        r"Generated (?:response|text)\b.*?(?:\\x(?:0[0-8bcef]|1[0-9a-f]|7f)|\\ufffd|\ufffd)",
        hint=Msg("rule.logged_output_garbled"),
        examples=("Generated response chatcmpl-1: output: 'motor\ufffd verbose', finish_reason: length",),
    ),
    rule(
        "degenerate_output",
        Kind.DECODE_ERROR,
        r"generated text:? ?'([^\w\s'\"])\1{9,}|output: '([^\w\s'\"])\2{9,}|\"content\": "
        r"?\"([^\w\s'\"])\3{9,}|"
        r"text='([^\w\s'\"])\4{9,}",
        role="weak",
        hint=Msg("rule.degenerate_output"),
        examples=("Prompt:  'The capital of France is:',generated text: '!!!!!!!!!!!!!!!!!!'",),
    ),
    # The whole answer one letter or digit said again, sixty times or more (vllm-ascend #4477: Qwen3-Next on a model
    # file written for another vLLM answers 'Hello, my name is' with ' 1111…', 127 of them): one token over and over,
    # as `output_one_token_id` reads the ids; a row of digits inside an answer, or a short one, is not this.
    rule(
        "answer_one_character_repeated",
        Kind.DEGENERATE_OUTPUT,
        r"generated text:? ?(['\"])\s?([^\W_])\2{59,}\1|\boutput: (['\"])\s?([^\W_])\4{59,}\3|"
        r"\"content\": ?\"\s?([^\W_])\5{59,}\"|(?<![\w.])text='\s?([^\W_])\6{59,}'",
        role="weak",
        hint=Msg("rule.answer_one_character_repeated"),
        examples=("Prompt: 'Hello, my name is', Generated text: ' " + "1" * 64 + "'",),
    ),
    rule(
        "replacement_char",
        Kind.DECODE_ERROR,
        "\ufffd",
        role="weak",
        hint=Msg("rule.replacement_char"),
        examples=("\u5929\u6c14\ufffd\ufffd\u62a5",),
    ),
    # --- empty answers ---
    rule(
        "generated_empty",
        Kind.EMPTY_OUTPUT,
        # a label with nothing after it is an empty answer only where the prompt stands on its line: a label
        # alone on its line ('GENERATED TEXT:') has its text on the next
        r"Generated text: ?(?:''|\"\")|Prompt: .*Generated text: ?$|"
        r"Generated response \S+(?: \(streaming complete\))?: output: (?:''|"
        r"\"\")|"
        r"CompletionOutput\(index=\d+, text=''|text='', token_ids=\[|\boutput: '', finish_reason",
        hint=Msg("rule.generated_empty"),
        examples=("Prompt: 'What is the capital', Generated text: ''",),
    ),
    rule(
        "response_empty",
        Kind.EMPTY_OUTPUT,
        r"\"completion_tokens\":\s*0\b|completion_tokens=0\b|\"text\":\s*\"\"[^{}]*\"tokens\":\s*\[\]|"
        r"\"message\":\s*\{[^{}]*\"content\":\s*(?:\"\"|"
        r"null)[^{}]*\}[^{}]{0,300}\"finish_reason\":\s*\"(?:stop|length)\"|"
        r"\"finish_reason\":\s*\"(?:stop|length)\"[^{}]{0,300}\"message\":\s*\{[^{}]*\"content\":\s*(?:\"\"|"
        r"null)|"
        r"finish_reason='(?:stop|length)'[^()]{0,120}message=ChatCompletionMessage\(content=(?:''|None)|"
        r"ChatCompletionMessage\(content=''|ChatCompletionMessage\(content=None[^()]*tool_calls=(?:None|"
        r"\[\])",
        hint=Msg("rule.response_empty"),
        examples=(
            '{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}',
        ),
    ),
    rule(
        "empty_stop_string",
        Kind.EMPTY_OUTPUT,
        r"\bstop=\[(?:[^\]]*?,\s*)?''\s*[,\]]",
        role="weak",
        hint=Msg("rule.empty_stop_string"),
        examples=("SamplingParams(n=1, stop=['', '<|user|>'], stop_token_ids=[], max_tokens=8140)",),
    ),
    rule(
        "responses_output_empty",
        Kind.EMPTY_OUTPUT,
        r"object='response', output=\[\]|\"object\":\s*\"response\".{0,200}\"output\":\s*\[\]",
        hint=Msg("rule.responses_output_empty"),
        examples=("Response(id='resp_1', created_at=1.0, error=None, model='m', object='response', output=[], x=1)",),
    ),
    rule(
        "immediate_eos",
        Kind.EMPTY_OUTPUT,
        r"immediate EOS|EOS as the (?:very )?first|EOS token as the (?:very )?first",
        role="weak",
        hint=Msg("rule.immediate_eos"),
        examples=("WARNING Model generated immediate EOS token for request x",),
    ),
)
