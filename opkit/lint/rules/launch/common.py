"""What the launch rules share: the examples' launcher and the located text of a launch."""

from __future__ import annotations

from opkit.formats.kernel_launches import Launch, Located


def launcher_example(body: str, *, parameters: str = "const at::Tensor &x") -> str:
    """A host launcher of ``my_kernel`` (the ``.asc`` file an example is written as) with ``body`` inside."""
    lines = "\n".join(f"    {line}" if line else "" for line in body.strip("\n").splitlines())
    return f"at::Tensor my_op({parameters})\n{{\n{lines}\n}}\n"


def launch_text(launch: Launch) -> str:
    return f"{launch.kernel}<<<{launch.config}>>>"


def where(located: Located | None) -> str:
    return f" (line {located.line})" if located is not None else ""


QUEUED_FIX = (
    "launch inside a lambda that `at_npu::native::OpCommand::RunOpApiV2(\"name\", lambda)` queues, with the stream of "
    "`c10_npu::getCurrentNPUStream().stream(false)` (launch mode 3), or pass `c10_npu::getCurrentNPUStream()` itself to <<<>>> (mode 1)"
)


def host_waits(file, kind: str, what: str, hint: str):
    """The violations of one kind of host wait (``HostWait.kind``) in the launching functions of ``file``."""
    from opkit.lint.finding import Violation

    for wait in file.host_waits:
        if wait.kind == kind:
            yield Violation(f"{wait.text} in {wait.function or 'the launcher'}: {what}", line=wait.line, column=wait.column, hint=hint)
