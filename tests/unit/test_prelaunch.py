"""The .pth hook that lets `chainlit run app.py` launch vLLM before Chainlit imports itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from chainlit_app.prelaunch import DIST_NAME, PTH_LINE, PTH_NAME, install, is_our_chainlit_run, process_runtime
from chainlit_app.runtime import Runtime

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


# -- the hook after uninstall, in a deleted folder, and across `chainlit run -w` reloads ---------------------
def _bare_venv(where: Path) -> Path:
    """A real, empty virtual environment (no pip, nothing installed); returns its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return next((where / "lib").glob("python3*/site-packages"))


def _fake_installed_project(site: Path) -> Path:
    """This project's distribution as pip records it (what `pip install -e .` leaves in site-packages)."""
    info = site / f"{DIST_NAME.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST_NAME}\nVersion: 0.1.0\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text(f"{info.name}/METADATA,,\n{info.name}/INSTALLER,,\n{info.name}/RECORD,,\n")
    return info


def test_pip_uninstall_removes_the_hook(tmp_path: Path) -> None:
    site = _bare_venv(tmp_path / "venv")
    _fake_installed_project(site)
    hook = Path(install(str(site)))
    install(str(site))  # `make app` again: listed once
    record = next(site.glob("*.dist-info/RECORD")).read_text()
    assert record.count(PTH_NAME) == 1
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(tmp_path / "venv" / "bin" / "python"),
                           "uninstall", "-y", DIST_NAME], capture_output=True, text=True, check=False,
                          # a PYTHONPATH naming a checkout (as worktrees run the tests) makes pip find the
                          # project there, outside the venv, and refuse to uninstall it
                          env={name: value for name, value in os.environ.items() if name != "PYTHONPATH"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert not hook.exists(), "pip uninstall left the interpreter-start hook behind"


def test_a_hook_left_without_its_package_prints_nothing(tmp_path: Path) -> None:
    site = _bare_venv(tmp_path / "venv")
    (site / PTH_NAME).write_text(PTH_LINE)  # the package is not installed in this environment
    done = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", "print('ok')"],
                          capture_output=True, text=True, check=False)
    assert (done.stdout, done.stderr) == ("ok\n", ""), done.stderr


def test_an_interpreter_started_in_a_deleted_folder_prints_nothing(tmp_path: Path) -> None:
    site = _bare_venv(tmp_path / "venv")
    (site / "project.pth").write_text(str(ROOT) + "\n")  # chainlit_app importable, as after `pip install -e`
    (site / PTH_NAME).write_text(PTH_LINE)
    python = tmp_path / "venv" / "bin" / "python"
    probe = "import chainlit_app.prelaunch as p; print(p._tried); p._tried = False; p.at_interpreter_start()"
    script = f'mkdir "$1/gone" && cd "$1/gone" && rmdir "$1/gone" && exec "{python}" -c "{probe}"'
    done = subprocess.run(["/bin/sh", "-c", script, "sh", str(tmp_path)], capture_output=True, text=True,
                          check=False, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == "True\n", "the hook ran at start (and again by hand) without a word"


def test_a_reload_gets_the_running_runtime_back() -> None:
    made: list[object] = []

    def make() -> Runtime:
        made.append(object())
        return made[-1]  # type: ignore[return-value]

    sys.modules.pop("_chainlit_app_process_state", None)
    try:
        first, reloaded = process_runtime(make)
        assert not reloaded
        for name in [n for n in sys.modules if n.startswith("chainlit_app")]:
            assert getattr(sys.modules[name], "__file__", None), "all of ours have files: Chainlit drops them"
        again, reloaded = process_runtime(make)
        assert reloaded and again is first and len(made) == 1
    finally:
        sys.modules.pop("_chainlit_app_process_state", None)
