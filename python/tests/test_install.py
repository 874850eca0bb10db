"""The package installs with pip (python/pyproject.toml, setuptools from Debian's packages, no
network) into a fresh virtual environment (`python3 -m venv --system-site-packages`, in the build
tree), and the README's Python example runs there against the installed package, its pytest
plugin registered by the entry point; `pip wheel` makes a wheel of it.

The module installed is the one this build made (ROPECHECK_EXTENSION, setup.py): the test is
about the packaging, not a second build of the core. The sources are copied out of the
repository first, so that setuptools' build files never land in the work tree.
"""

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ropecheck

pytest.importorskip("pip")

REPOSITORY = Path(__file__).resolve().parents[2]
BUILT = Path(ropecheck.__file__).resolve().parent  # <build>/python/ropecheck


def readme_example() -> str:
    """The README's pytest example: test_readme_example.py up to its end marker, which
    test_readme_example checks is in the README verbatim."""
    text = (Path(__file__).parent / "test_readme_example.py").read_text()
    return text[: text.index("# ---- end of the README example")]


def test_pip_installs_into_a_venv_where_the_readme_example_runs(tmp_path):
    extension = glob.glob(str(BUILT / "_ropecheck*.so"))
    assert extension, BUILT
    venv = BUILT.parent.parent / "python_install_venv"  # in the build tree
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    source = tmp_path / "python"
    shutil.copytree(REPOSITORY / "python", source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                                                  "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_CURRENT_TEST", "RC_PARAMS")}
    env.update(ROPECHECK_EXTENSION=extension[0], PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    install = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", str(source)],
                             env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]

    where = subprocess.run([python, "-c", "import ropecheck, ropecheck.torch; print(ropecheck.__file__)"],
                           env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    project = tmp_path / "project"
    project.mkdir()
    (project / "test_rope.py").write_text(readme_example())
    run_env = dict(env, PYTHONPATH=str(REPOSITORY / "examples" / "python"))  # numpy_rope, as the README says
    run = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_rope.py"], env=run_env,
                         cwd=project, capture_output=True, text=True)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    # The plugin came with the install (entry point pytest11), not with -p.
    for plugin_flags in ([], ["-p", "ropecheck.pytest"]):  # -p of the installed plugin is harmless
        help_text = subprocess.run([python, "-m", "pytest", *plugin_flags, "--help"], env=env, cwd=project,
                                   capture_output=True, text=True, check=True).stdout
        assert "--ropecheck-update-baseline" in help_text


def test_pip_wheel_makes_a_wheel(tmp_path):
    extension = glob.glob(str(BUILT / "_ropecheck*.so"))
    source = tmp_path / "python"
    shutil.copytree(REPOSITORY / "python", source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                                                  "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(ROPECHECK_EXTENSION=extension[0], PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    wheel = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w",
                            str(tmp_path / "dist"), str(source)], env=env, capture_output=True, text=True)
    assert wheel.returncode == 0, wheel.stdout[-3000:] + wheel.stderr[-3000:]
    wheels = list((tmp_path / "dist").glob("ropecheck-*.whl"))
    assert len(wheels) == 1
    import zipfile

    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(n.startswith("ropecheck/_ropecheck") and n.endswith(".so") for n in names), names
    assert {"ropecheck/__init__.py", "ropecheck/torch.py", "ropecheck/pytest.py", "ropecheck/py.typed"} <= set(names)
