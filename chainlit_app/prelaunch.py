"""Launch vLLM the moment `chainlit run app.py` starts, before Chainlit has imported itself.

vLLM's start is the long pole of a cold start, and Chainlit's command line spends about 1.1 s importing
Chainlit (FastAPI, socket.io, its data layers) before it reads app.py. `make app` puts a one-line .pth
file into the app's environment that calls `at_interpreter_start` when any Python of that environment
starts; unless the command line is `chainlit run` of this project's app.py it returns after a look at
sys.argv. Otherwise it builds the app's Runtime and tries its early launch (Runtime.launch_early: only
with the model at hand and a warm preflight cache), which app.py then adopts with `take_runtime()`.
Any failure here is swallowed: app.py launches as it would have anyway. CHAT_PRELAUNCH=0 turns it off.
Only the standard library is imported until the command line is known to be ours.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chainlit_app.runtime import Runtime

PTH_NAME = "chainlit_app_prelaunch.pth"
PTH_LINE = "import chainlit_app.prelaunch; chainlit_app.prelaunch.at_interpreter_start()\n"
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
    if os.environ.get("CHAT_PRELAUNCH", "1") == "0" or not is_our_chainlit_run(sys.argv, os.getcwd()):
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


def install(site_packages: str) -> str:
    """Write the .pth file into an environment's site-packages (`python -m chainlit_app.prelaunch`)."""
    path = os.path.join(site_packages, PTH_NAME)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(PTH_LINE)
    return path


if __name__ == "__main__":
    import site

    print("installed", install(site.getsitepackages()[0]))
