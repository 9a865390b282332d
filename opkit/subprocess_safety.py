"""How opkit starts another program so that nothing in the user's working directory or repository runs.

A ``python -m pip`` or ``python -c`` started in the working directory puts that directory first on the
child's ``sys.path``: a ``./pip/__main__.py`` or ``./json.py`` there would run instead of the real one.
``python_argv`` gives the interpreter's absolute path with ``-P`` (Python 3.11+: no unsafe first path
entry), and every Python child runs in ``clean_cwd()``, an empty private directory, which covers older
Pythons too; ``python_env`` drops relative ``PYTHONPATH`` entries (they name the working directory).

git reads the repository's own ``.git/config``, which can name commands git then runs (``core.fsmonitor``,
hooks, a pager, an external diff or textconv driver). ``git_argv`` overrides each of those with ``-c``,
``git_env`` turns off the system and global config and the terminal prompt.

``run_killing_group`` runs a command in its own process group and kills the whole group at the timeout:
a compiler's children (cc1plus) must not outlive it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence

# The settings by which a repository's config could make git run a command while lint reads a diff.
GIT_NEUTRAL_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.untrackedCache=false",
    "diff.external=",
    "core.sshCommand=false",
    "core.askPass=",
    "credential.helper=",
    "protocol.allow=never",
)


def python_argv(*args: str) -> list[str]:
    """``sys.executable`` (absolute) with the flags that keep the working directory off ``sys.path``."""
    flags = ["-P"] if sys.version_info >= (3, 11) else []
    return [os.path.abspath(sys.executable), *flags, *args]


def python_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a Python child: ``PYTHONPATH`` without relative (working-directory) entries,
    no ``PYTHONSTARTUP``, ``PYTHONSAFEPATH`` set."""
    env = dict(os.environ if base is None else base)
    if "PYTHONPATH" in env:
        kept = [entry for entry in env["PYTHONPATH"].split(os.pathsep) if entry and os.path.isabs(entry)]
        if kept:
            env["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del env["PYTHONPATH"]
    env.pop("PYTHONSTARTUP", None)
    env["PYTHONSAFEPATH"] = "1"
    return env


@contextlib.contextmanager
def clean_cwd() -> Iterator[str]:
    """An empty private directory to run a child in, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="opkit-cwd-") as directory:
        yield directory


def git_argv(top: str, *args: str) -> list[str]:
    """``git -C top`` with the repository's command-running settings overridden, then ``args``."""
    overrides = [arg for setting in GIT_NEUTRAL_CONFIG for arg in ("-c", setting)]
    return ["git", "--no-pager", *overrides, "-C", top, *args]


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS"):
        env.pop(name, None)
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
    return env


def run_killing_group(command: Sequence[str], *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` in a new session; at the timeout the whole process group is killed (SIGKILL) and
    ``subprocess.TimeoutExpired`` raised, after the group is reaped."""
    with subprocess.Popen(command, start_new_session=True, **kwargs) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        except BaseException:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
