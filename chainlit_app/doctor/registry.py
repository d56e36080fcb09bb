"""A registry of checks that states, for each, what it needs, what it provides and when it applies.

The doctor's checks used to be one hand-wired sequence of if-statements; a new check meant finding the
right spot and the right guard. Here a check is registered with a decorator, in the spirit of vLLM's
`ReasoningParserManager.register_module`:

    @CHECKS.register("config", needs=("folder",), provides=("config",))
    def _config(ctx: Context) -> Check: ...

`ordered()` sorts the checks so that each runs after every check providing what it needs (registration
order breaks ties, so it is also the report order), and refuses unknown needs and cycles. The runner
(`run_checks`) skips a check whose need was not provided, as when the check providing it failed.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from .check import Check


class HasProvisions(Protocol):
    """A context the runner can record met needs in."""

    provided: set[str]


C = TypeVar("C", bound=HasProvisions)
Step = Callable[[C], Check]


class RegistryError(ValueError):
    """A registry that cannot run: a duplicate name, a need nobody provides, or a cycle."""


def always(_ctx: object) -> bool:
    return True


def when_passed(_ctx: object, check: Check) -> bool:
    """The default for `provided_when`: a check provides its names when it passes."""
    return check.status == "pass"


@dataclass(frozen=True)
class RegisteredCheck(Generic[C]):
    """One registered check; `position` is its registration order, the tie-break of the run order."""

    name: str
    run: Callable[[C], Check]
    needs: frozenset[str]
    provides: frozenset[str]
    applies: Callable[[C], bool]
    provided_when: Callable[[C, Check], bool]
    position: int


class CheckRegistry(Generic[C]):
    """Checks by name, in registration order; `ordered()` gives the order to run them in."""

    def __init__(self) -> None:
        self._checks: dict[str, RegisteredCheck[C]] = {}

    def __iter__(self) -> Iterator[RegisteredCheck[C]]:
        return iter(self._checks.values())

    def __len__(self) -> int:
        return len(self._checks)

    def register(self, name: str, *, needs: Iterable[str] = (), provides: Iterable[str] = (),
                 applies: Callable[[C], bool] = always,
                 provided_when: Callable[[C, Check], bool] = when_passed) -> Callable[[Step[C]], Step[C]]:
        """Decorator: register `run` under `name`; the function itself is returned unchanged."""

        def decorate(run: Step[C]) -> Step[C]:
            self.add(RegisteredCheck(name, run, frozenset(needs), frozenset(provides), applies, provided_when,
                                     position=len(self._checks)))
            return run

        return decorate

    def add(self, check: RegisteredCheck[C]) -> None:
        if check.name in self._checks:
            raise RegistryError(f"a check named {check.name!r} is already registered")
        self._checks[check.name] = check

    @classmethod
    def chain(cls, *parts: CheckRegistry[C]) -> CheckRegistry[C]:
        """One registry holding the parts' checks in the order given (the report order across modules)."""
        combined: CheckRegistry[C] = cls()
        for part in parts:
            for check in part:
                combined.add(RegisteredCheck(check.name, check.run, check.needs, check.provides, check.applies,
                                             check.provided_when, position=len(combined)))
        return combined

    def ordered(self, inputs: Iterable[str] = ()) -> list[RegisteredCheck[C]]:
        """Every check after the checks providing its needs; `inputs` are needs the context meets itself."""
        known = frozenset(inputs)
        providers: dict[str, list[str]] = {}
        for check in self:
            for name in check.provides:
                providers.setdefault(name, []).append(check.name)
        after: dict[str, set[str]] = {}
        for check in self:
            unknown = sorted(n for n in check.needs if n not in providers and n not in known)
            if unknown:
                raise RegistryError(f"check {check.name!r} needs {', '.join(unknown)}, which no check provides")
            after[check.name] = {p for n in check.needs for p in providers.get(n, ()) if p != check.name}
        return self._topological(after)

    def _topological(self, after: dict[str, set[str]]) -> list[RegisteredCheck[C]]:
        """Kahn's algorithm, always taking the earliest-registered ready check (a stable order)."""
        waiting = {name: set(deps) for name, deps in after.items()}
        ready = [(c.position, c.name) for c in self if not waiting[c.name]]
        heapq.heapify(ready)
        order: list[RegisteredCheck[C]] = []
        while ready:
            _, name = heapq.heappop(ready)
            order.append(self._checks[name])
            del waiting[name]
            for other, deps in waiting.items():
                if name in deps:
                    deps.discard(name)
                    if not deps:
                        heapq.heappush(ready, (self._checks[other].position, other))
        if waiting:
            raise RegistryError(f"checks {', '.join(sorted(waiting))} need each other (a cycle)")
        return order


def run_checks(registry: CheckRegistry[C], ctx: C, inputs: Iterable[str] = ()) -> list[Check]:
    """Run the applicable checks whose needs are met, in dependency order; record what each provides.

    `inputs` are all the needs the context can meet itself; `ctx.provided` holds those it meets now.
    """
    results: list[Check] = []
    for check in registry.ordered(inputs):
        if not check.needs <= ctx.provided or not check.applies(ctx):
            continue
        result = check.run(ctx)
        results.append(result)
        if check.provides and check.provided_when(ctx, result):
            ctx.provided |= check.provides
    return results
