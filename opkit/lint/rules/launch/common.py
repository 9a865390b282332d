"""What the launch rules share: the examples' launchers and the violation at a launch."""

from __future__ import annotations

from opkit.formats.kernel_launches import Launch, Located
from opkit.lint.finding import Violation


def launcher_example(body: str, *, parameters: str = "const at::Tensor &x") -> str:
    """A host launcher of ``my_kernel`` (the ``.asc`` file an example is written as) with ``body`` inside."""
    lines = "\n".join(f"    {line}" if line else "" for line in body.strip("\n").splitlines())
    return f"at::Tensor my_op({parameters})\n{{\n{lines}\n}}\n"


# The launch every example makes, and the allocation most make before it.
LAUNCH = "my_kernel<<<8, nullptr, stream>>>(x.mutable_data_ptr(), out.mutable_data_ptr());"
EMPTY_OUT = "at::Tensor out = at::empty_like(x);"


def direct_launcher_example(*before: str, after: tuple[str, ...] = ()) -> str:
    """A launcher that runs ``before``, launches ``LAUNCH`` directly (no ``OpCommand``), runs ``after`` and returns ``out``."""
    return launcher_example("\n".join((*before, LAUNCH, *after, "return out;")))


def queued_launcher_example(stream: str) -> str:
    """A launcher that takes ``auto stream = <stream>;`` and launches inside a lambda ``OpCommand::RunOpApiV2`` queues."""
    return launcher_example(f"""
auto stream = {stream};
{EMPTY_OUT}
auto x_gm = x.mutable_data_ptr();
auto out_gm = out.mutable_data_ptr();
auto launch = [=]() -> int {{
    my_kernel<<<8, nullptr, stream>>>(x_gm, out_gm);
    return 0;
}};
at_npu::native::OpCommand::RunOpApiV2("my_op", launch);
return out;
""")


def launch_text(launch: Launch) -> str:
    return f"{launch.kernel}<<<{launch.config}>>>"


def where(located: Located | None) -> str:
    return f" (line {located.line})" if located is not None else ""


QUEUED_FIX = (
    "launch inside a lambda that `at_npu::native::OpCommand::RunOpApiV2(\"name\", lambda)` queues, with the stream of "
    "`c10_npu::getCurrentNPUStream().stream(false)` (launch mode 3), or pass `c10_npu::getCurrentNPUStream()` itself to <<<>>> (mode 1)"
)


def at_launch(launch: Launch, message: str, hint: str):
    """The violation at ``launch``: its ``kernel<<<config>>>`` text, then ``message``."""
    return Violation(f"{launch_text(launch)} {message}", line=launch.line, column=launch.column, hint=hint)


def host_waits(file, kind: str, what: str, hint: str):
    """The violations of one kind of host wait (``HostWait.kind``) in the launching functions of ``file``."""
    for wait in file.host_waits:
        if wait.kind == kind:
            yield Violation(f"{wait.text} in {wait.function or 'the launcher'}: {what}", line=wait.line, column=wait.column, hint=hint)
