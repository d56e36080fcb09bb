"""The ladder that names a traceback: a rule on its exception line, else the exception's type (most specific
class first), else the module it was raised in, else the phase; and the phase a traceback ran in when the
excerpt shows no marker. Mixed into `LineClassifier`, kept apart so that each file holds one concern.
"""

from __future__ import annotations

from chainlit_app.i18n import Msg

from .chains import ChainLinks
from .classifier_part import ClassifierPart
from .cut_stacks import cut_in_kernel_launch
from .error_words import is_fallback
from .events import Traceback
from .exceptions import SERVING_ONLY, ancestry, exception_name, lookup, owner_of, raised_in
from .findings import Finding
from .harmless import is_tracker_cleanup
from .lineformat import ParsedLine
from .phases import Phase, stack_shows_serving, stack_shows_starting, words_show_serving
from .plugin_frames import plugin_called_by_vllm
from .rules import Context
from .taxonomy import Kind

PLUGIN_RULE = "raised_in_plugin_of_another_release"

# A traceback logged below ERROR was caught by the code that printed it, which chose to warn and go on (vLLM's
# optional-module probe: `WARNING … Module vllm.third_party.deep_gemm was found but failed to import`, its traceback
# at WARNING, round 65): what it could not do fails later in its own words, at ERROR.
_CAUGHT_AND_WARNED = frozenset({"WARNING", "INFO", "DEBUG"})


class TracebackLadder(ClassifierPart):
    """Naming tracebacks; the classifier provides `_finding`, `_match`, `_phase_default`, `phase` and this state."""

    _chains: ChainLinks
    _fatal_seen: bool
    _last_traceback: int
    _named_in_traceback: set[str]
    _named_messages: dict[str, int]
    _tb_guesses: list[tuple[Finding, Traceback, str]]
    _fatal_guesses: list[Finding]

    def _match(self, msg: str, text: str, lineno: int, context: Context, parsed: ParsedLine, replaced: bool,
               pointed_from: int = 0) -> list[Finding]:
        raise NotImplementedError

    def _phase_default(self, lineno: int, text: str, what: str, role: str, phase: Phase | None = None
                       ) -> list[Finding]:
        raise NotImplementedError

    def _on_traceback(self, tb: Traceback, parsed: ParsedLine, text: str, replaced: bool) -> list[Finding]:
        """The exception line that ends a traceback: rule, exception type, raised in, phase."""
        if tb.dump or (tb.native and self._fatal_seen):
            return []  # the frames of a fatal signal, already named at the signal
        if is_tracker_cleanup(tb.exception_type, tb.frames):
            return []
        named_before = tb.process in self._named_in_traceback
        self._named_in_traceback.discard(tb.process)
        pointed_from = self._last_traceback
        self._last_traceback = tb.line
        phase = self._traceback_phase(tb)
        context = Context(phase, exception_type=tb.exception_type, raised_in=tb.raised_in, level=parsed.level)
        found = self._match(parsed.message, text, tb.line, context, parsed, replaced, pointed_from)
        # a logger's record below ERROR (its level with its time or its name, not a warning class the line ends in)
        if parsed.level in _CAUGHT_AND_WARNED and (parsed.logger or parsed.time):  # a decisive rule only names it
            return self._chains.link(tb.process, [finding for finding in found if finding.role != "weak"])
        if (found and found[0].role != "weak") or named_before or phase == Phase.STOPPING:
            return self._chains.link(tb.process, found)
        # a symptom pattern (weak) on the exception line yields to what the exception's type or place says
        found = self._chains.link(tb.process, self._ladder(tb, text, phase, found, pointed_from))
        if found and is_fallback(found[0].rule) and self._named_messages.get(tb.process) == tb.first_line - 1:
            return []  # `logger.exception(message)`: the message right above named it; its stack adds nothing
        if not self._phases.seen_marker and found and found[0].basis in ("exception_type", "raised_in") \
                and len(self._tb_guesses) < 20:
            self._tb_guesses.append((found[0], tb, text))  # named in a phase the excerpt had not shown yet
        return found

    def _on_cut_traceback(self, tb: Traceback, mid_log: bool = False) -> list[Finding]:
        """A traceback whose exception line never came is still a failure: read by its stack, shown at the
        innermost line it showed (a frame or its code), else at its header. Cut in the middle of a log (stderr
        interleaved with stdout), its exception line may still come: the phase's guess is then only weak."""
        shown = tb.text
        if not tb.line:
            tb.line, shown = tb.last_seen if tb.last_seen[0] else (tb.first_line, "Traceback (most recent call last):")
        found = self._on_traceback(tb, ParsedLine("", tb.last_code, tb.process), shown, False)
        if mid_log:
            for finding in found:
                if finding.basis == "phase":
                    finding.role = "weak"
        return found

    def _ladder(self, tb: Traceback, text: str, phase: Phase, symptom: list[Finding], pointed_from: int
                ) -> list[Finding]:
        """Exception type, then where it was raised, then the weak symptom, then the phase."""
        entry = lookup(ancestry(tb.exception_type), tb.message, phase) if tb.exception_type else None
        if entry is None and tb.mentions and not tb.exception_type:
            entry = lookup(list(reversed(tb.mentions)), tb.message, phase)
        if entry is not None and (entry.wrapper and symptom):
            return symptom
        if entry is not None:
            role = "wrapper" if entry.wrapper else "weak" if entry.symptom else "decisive"
            finding = self._finding(entry.kind, tb.line, text, entry.hint, f"exc_{exception_name(tb.exception_type)}",
                                    role, "exception_type")
            finding.points_to = pointed_from if entry.wrapper else 0
            return [finding]
        plugin = plugin_called_by_vllm(tb.frames) if exception_name(tb.exception_type) == "AttributeError" else ""
        if plugin:  # a plugin's code reading vLLM's objects as another release had them
            return [self._finding(Kind.VERSION_MISMATCH, tb.line, text,
                                  Msg("hint.plugin_of_another_release", where=plugin), PLUGIN_RULE, "decisive",
                                  "raised_in")]
        where = raised_in(tb.raised_in or owner_of(tb.message), tb.stack, phase)
        if where is not None:
            hint = Msg("hint.raised_in", hint=where.hint, where=tb.raised_in or owner_of(tb.message))
            return [self._finding(where.kind, tb.line, text, hint, f"raised_in_{where.kind.value}",
                                  "weak" if where.symptom else "decisive", "raised_in")]
        if symptom:
            return symptom
        what = Msg("what.unrecognised", exception=exception_name(tb.exception_type)) if tb.exception_type else \
            Msg("what.no_exception_line")
        return self._phase_default(tb.line, text, what, "fallback", phase)

    def _settle_fatal(self, stack: Traceback) -> None:
        """A fatal signal named without a phase marker was read as a crash while serving; the stack
        printed with it (faulthandler's dump, torch's native frames) says when it happened."""
        guesses, self._fatal_guesses = self._fatal_guesses, []
        if not (stack.dump or stack.native) or not stack_shows_starting(stack.functions):
            return
        for finding in guesses:
            finding.kind = Kind.STARTUP_FAILURE.value
            finding.rule = f"phase_{Kind.STARTUP_FAILURE.value}"
            finding.hint = Msg("hint.phase_startup_failure", what=Msg("what.fatal_signal_loading"))

    def _traceback_phase(self, tb: Traceback) -> Phase:
        """The log's phase; when the excerpt has no markers, what the traceback's stack shows."""
        if self._phases.seen_marker:
            return self.phase
        serving_only = SERVING_ONLY.intersection(ancestry(tb.exception_type))
        if stack_shows_serving(tb.reached_outside_stdlib[-12:]) or serving_only:
            self._phases.enter(Phase.SERVING)
            return Phase.SERVING
        if tb.native or cut_in_kernel_launch(tb):  # native code (kernels, NCCL) runs once the model is loaded
            return Phase.SERVING
        if not stack_shows_starting(tb.functions) and words_show_serving(tb.message):
            return Phase.SERVING
        return Phase.BOOT
