"""The .pth hook that lets `chainlit run app.py` launch vLLM before Chainlit imports itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from chainlit_app.prelaunch import PTH_LINE, PTH_NAME, install, is_our_chainlit_run

ROOT = Path(__file__).resolve().parents[2]


def test_only_chainlit_run_of_this_projects_app_counts() -> None:
    root = str(ROOT)
    assert is_our_chainlit_run([".venv/bin/chainlit", "run", "app.py", "--headless"], root)
    assert is_our_chainlit_run(["/x/bin/chainlit", "run", "--headless", str(ROOT / "app.py")], "/tmp")
    assert is_our_chainlit_run([".venv/bin/chainlit", "run", "--port", "8000", "app.py"], root), "option values"
    assert not is_our_chainlit_run([".venv/bin/chainlit", "run", "other.py"], root)
    assert not is_our_chainlit_run([".venv/bin/chainlit", "run", "app.py"], "/tmp"), "another project's app.py"
    assert not is_our_chainlit_run([".venv/bin/chainlit", "hello"], root)
    assert not is_our_chainlit_run(["-m", "pytest", "app.py"], root)
    assert not is_our_chainlit_run(["-c"], root)


def test_the_apps_environment_carries_the_hook_and_other_programs_pay_only_a_look() -> None:
    """`make app` installs the hook; a Python of that environment that is not the app launches nothing."""
    probe = ("import sys, chainlit_app.prelaunch as p; "
             "print(p._tried, p._runtime, 'chainlit_app.runtime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["True", "None", "False"], out.stdout + out.stderr


def test_install_writes_one_import_line(tmp_path: Path) -> None:
    path = Path(install(str(tmp_path)))
    assert path.name == PTH_NAME and path.read_text() == PTH_LINE
    assert PTH_LINE.startswith("import "), "site.py executes only .pth lines that start with import"
