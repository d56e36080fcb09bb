"""Launch vLLM the moment `chainlit run app.py` starts, before Chainlit has imported itself.

vLLM's start is the long pole of a cold start, and Chainlit's command line spends about 1.1 s importing
Chainlit (FastAPI, socket.io, its data layers) before it reads app.py. `make app` puts a one-line .pth
file into the app's environment that calls `at_interpreter_start` when any Python of that environment
starts; unless the command line is `chainlit run` of this project's app.py it returns after a look at
sys.argv. Otherwise it builds the app's Runtime and tries its early launch (Runtime.launch_early: only
with the model at hand and a warm preflight cache), which app.py then adopts with `take_runtime()`.
Any failure here is swallowed: app.py launches as it would have anyway. CHAT_PRELAUNCH=0 turns it off.
Only the standard library is imported until the command line is known to be ours.

The hook must never cost an interpreter more than a look: the .pth line swallows every error (after
`pip uninstall` the package is gone; an interpreter started in a deleted folder has no cwd), and
`install` lists the .pth in the distribution's RECORD so that `pip uninstall` removes it too.
`chainlit run -w` re-executes app.py in the same process at every reload (after dropping our modules
from sys.modules): `process_runtime` keeps the running Runtime, and its vLLM, across reloads.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chainlit_app.runtime import Runtime

PTH_NAME = "chainlit_app_prelaunch.pth"
# site.py runs a .pth line only when it starts with `import`, and prints a traceback for any error in it.
PTH_LINE = ('import sys; exec("try:\\n import chainlit_app.prelaunch as p\\n p.at_interpreter_start()\\n'
            'except Exception:\\n pass")\n')
DIST_NAME = "chainlit-vllm-console"
# A module without a file: Chainlit's reload drops every module whose file is in the project, not this one.
_KEEPER = "_chainlit_app_process_state"
_APP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "app.py")

_runtime: Runtime | None = None
_tried = False


def is_our_chainlit_run(argv: list[str], cwd: str) -> bool:
    """`chainlit run [options] app.py ...` where app.py is this project's entry point."""
    if len(argv) < 3 or os.path.basename(argv[0]) != "chainlit" or argv[1] != "run":
        return False
    target = next((arg for arg in argv[2:] if arg.endswith(".py") and not arg.startswith("-")), None)
    return target is not None and os.path.realpath(os.path.join(cwd, target)) == os.path.realpath(_APP)


def at_interpreter_start() -> None:
    """Called by the .pth line in every interpreter of the app's environment; acts once, for ours only."""
    global _runtime, _tried
    if _tried:
        return
    _tried = True
    try:
        cwd = os.getcwd()
    except OSError:  # started in a folder that was deleted since: not our app's start
        return
    if os.environ.get("CHAT_PRELAUNCH", "1") == "0" or not is_our_chainlit_run(sys.argv, cwd):
        return
    try:
        # Chainlit reads the same file the same way (no override) when it is imported; CHAT_* may be there.
        from dotenv import load_dotenv

        load_dotenv(os.path.join(os.getcwd(), os.getenv("CHAINLIT_ENV_FILE", ".env")))

        import logging

        from chainlit_app.applog import configure_logging

        configure_logging()  # before Chainlit's command line configures logging a second later
        from chainlit_app.runtime import Runtime
        from chainlit_app.settings import get_settings

        runtime = Runtime(get_settings())
        if runtime.launch_early():
            before = "before" if "chainlit" not in sys.modules else "after"
            logging.getLogger(__name__).info("vLLM launched at interpreter start, %s Chainlit was imported", before)
        _runtime = runtime
    except Exception as exc:  # never break an interpreter's start; app.py launches as usual
        print(f"chat console: early vLLM launch skipped ({type(exc).__name__}: {exc})", file=sys.stderr)


def take_runtime() -> Runtime | None:
    """The Runtime built at interpreter start (its vLLM possibly spawned already), for app.py; once."""
    global _runtime
    runtime, _runtime = _runtime, None
    return runtime


def process_runtime(make: Callable[[], Runtime]) -> tuple[Runtime, bool]:
    """The process's one Runtime for app.py, and whether it was running already. A `chainlit run -w`
    reload executes app.py again in this process: it gets the running Runtime back (True), so no second
    vLLM is launched; a first import gets the interpreter-start one or `make()` (False)."""
    keeper = sys.modules.get(_KEEPER)
    if keeper is None:
        keeper = sys.modules.setdefault(_KEEPER, types.ModuleType(_KEEPER, "the app's Runtime, across reloads"))
    running: Runtime | None = getattr(keeper, "runtime", None)
    if running is not None:
        return running, True
    runtime = take_runtime() or make()
    keeper.runtime = runtime  # type: ignore[attr-defined]
    return runtime, False


def install(site_packages: str) -> str:
    """Write the .pth file into an environment's site-packages (`python -m chainlit_app.prelaunch`), and
    list it in the installed distribution's RECORD, so that `pip uninstall` removes it with the rest."""
    path = os.path.join(site_packages, PTH_NAME)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(PTH_LINE)
    _add_to_record(site_packages, PTH_NAME)
    return path


def _add_to_record(site_packages: str, name: str) -> None:
    """Append `name` to the RECORD of this project's distribution in `site_packages` (none: nothing)."""
    from importlib import metadata

    for dist in metadata.distributions(path=[site_packages]):
        if dist.metadata["Name"].lower().replace("_", "-") != DIST_NAME:
            continue
        files = dist.files or []
        record = next((f for f in files if f.name == "RECORD" and f.parent.name.endswith(".dist-info")), None)
        if record is not None and name not in {str(f) for f in files}:
            with open(str(dist.locate_file(record)), "a", encoding="utf-8") as handle:
                handle.write(f"{name},,\n")


if __name__ == "__main__":
    import site

    print("installed", install(site.getsitepackages()[0]))
