"""What an op's kernel does, as read from its code: the model lint and verify both hold a registration to.

One ``OpEffects`` per op, computed once per lint or verify run from the op's kernel(s) by the readers in
``opkit.formats`` (C++ host kernels, aclnn headers, OpDefs, device kernels, Python kernel bodies, op-plugin's
``gen_opapi`` entries). Every fact carries its ``Evidence`` (file, line, column and why). "Unknown" is a
first-class answer: a rule fires on what the model knows, never on a guess (kernel-effects.md).

The model knows nothing of schemas' alias annotations: it says what the kernel does; the rules in
``opkit.lint.rules.effects`` compare that with the promise, and ``opkit.verify`` builds its stand-in kernel
from it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Knowledge(enum.Enum):
    """What the code tells about one fact."""

    YES = "yes"  # the code shows it (evidence given)
    NO = "no"  # the whole kernel was read and nothing shows it
    UNKNOWN = "unknown"  # some of the kernel could not be read (a call opkit does not follow, ...)

    def __bool__(self) -> bool:  # a fact is true only when known to be
        return self is Knowledge.YES


@dataclass(frozen=True)
class Evidence:
    """Where the code shows a fact, and why it means what it means."""

    path: str
    line: int
    column: int
    why: str  # "aclnnAddRmsNorm's output yOut (aclnn_add_rms_norm.h:12)", "x.copy_(...)", ...

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.why}"


@dataclass(frozen=True)
class ArgumentEffect:
    """One tensor argument of the op (``Tensor``, ``Tensor?``, ``Tensor[]``) and whether the kernel writes it."""

    name: str  # the schema argument's name (the kernel parameter mapped to it by position)
    written: Knowledge
    evidence: tuple[Evidence, ...] = ()  # for YES: each place that writes it
    unknown_because: str = ""  # for UNKNOWN: what could not be followed (a call, a helper, ...)
    # for UNKNOWN: the kernel language whose reading settles it ("device": the tensor's memory goes to a <<<>>>
    # launch); a known answer from a kernel of that language replaces this unknown when effects are merged
    settled_by: str = ""


@dataclass(frozen=True)
class Allocation:
    """How the kernel makes a fresh output: the dtype, size source and device it gives it.

    Each field is what the code says, normalised where opkit can (``dtype``: a torch dtype name such as
    ``"int8"``, or ``"like:x"`` for the dtype of argument ``x``; ``size``: ``"like:x"`` or the expression as
    written; ``device``: ``"like:x"``, ``"npu"``, ``"cpu"``); None where the code does not tell."""

    dtype: str | None = None
    size: str | None = None
    device: str | None = None
    evidence: Evidence | None = None


@dataclass(frozen=True)
class ReturnEffect:
    """One output of the kernel: an input returned as-is (an alias), or a fresh allocation, or unknown."""

    index: int  # position among the schema's returns
    aliases: str | None = None  # the argument returned as-is (``return y;``, ``std::tuple<at::Tensor&, ...>``)
    allocation: Allocation | None = None  # a fresh tensor, when the code shows how it is made
    known: bool = False  # False: the code does not tell what this output is
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class KernelSite:
    """One kernel read for the op: which function, registered for which dispatch key, where."""

    function: str  # "vllm_ascend::batch_matmul_transpose", "my_op_impl" (Python), "my_kernel" (device)
    language: str  # "c++", "python", "device" (an Ascend C __global__ kernel), "op-plugin" (a gen_opapi entry)
    dispatch_key: str  # "PrivateUse1", "CPU", "CompositeExplicitAutograd", "" where not registered by key
    path: str
    line: int
    column: int = 1


@dataclass(frozen=True)
class OpEffects:
    """What the kernel(s) of one op do, with the evidence, and where the code did not tell."""

    op: str  # "ns::name" or "ns::name.overload" as registered
    kernels: tuple[KernelSite, ...]  # the code read; empty: no kernel found (every fact UNKNOWN)
    arguments: tuple[ArgumentEffect, ...] = ()  # one per tensor argument of the schema, in schema order
    returns: tuple[ReturnEffect, ...] = ()  # one per schema return, in order
    aclop: tuple[Evidence, ...] = ()  # OpCommand ... .Run(): the aclop path, which aclgraph capture refuses
    host_syncs: tuple[Evidence, ...] = ()  # .item(), .cpu(), stream synchronisation, ...: capture refuses them
    side_effects: tuple[Evidence, ...] = ()  # writes outside the op's arguments (collectives, globals, files)
    unknowns: tuple[str, ...] = field(default=())  # what could not be followed, op-wide ("calls helper f (not found)")

    def argument(self, name: str) -> ArgumentEffect | None:
        return next((a for a in self.arguments if a.name == name), None)

    @property
    def written(self) -> tuple[str, ...]:
        """The arguments the kernel is known to write."""
        return tuple(a.name for a in self.arguments if a.written is Knowledge.YES)

    @property
    def complete(self) -> bool:
        """Whether every argument's write and every return is known: "nothing else is written" holds."""
        return bool(self.kernels) and not self.unknowns and all(a.written is not Knowledge.UNKNOWN for a in self.arguments) and all(r.known for r in self.returns)
