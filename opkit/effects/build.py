"""Every op's ``OpEffects``, computed once from the readers' records by one producer per kernel language.

A producer is a module of this package with ``produce(inputs) -> Iterable[OpEffects]``: ``cpp`` (C++ host
kernels bound by ``impl``), ``python`` (Python kernel bodies), ``device`` (``<<<>>>`` launches traced into the
device kernels' copies to global memory). Each says what its code shows; ``compute`` merges what they say
of one op (``merge``). A producer whose inputs are absent returns at once, and its module is imported only
when asked, so a lint of a yaml file never loads the C++ readers.

``inputs`` is anything holding the readers' records under these names (``opkit.lint``'s ``LintProject`` does;
``Sources`` is the plain holder verify and new fill):

* ``cpp_files``: ``CppRegistrationFile``s (TORCH_LIBRARY blocks);
* ``cpp_functions``: the functions kernels may name (``cpp_registrations.function_index``);
* ``cpp_texts``: every C++ file's text by path (kernel bodies, helpers, aclnn headers, device kernels);
* ``python_files``: ``RegistrationFile``s; ``opdef_files``: ``OpDefFile``s; ``launch_files``:
  ``KernelLaunchFile``s; ``yaml_files``: ``OpPluginFile``s.
* ``cpp_tokens``, ``device_code``: what one producer lexed and read of a C++ file, for the next (optional).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from opkit.effects.model import Knowledge, OpEffects

# The producers, by module, in the order their kernels are listed. One line each: a branch adding a
# producer adds its line.
PRODUCERS: tuple[str, ...] = (
    "opkit.effects.cpp",
    "opkit.effects.python",
    "opkit.effects.device",
)


@dataclass
class Sources:
    """The readers' records a producer reads, for callers without a ``LintProject`` (verify, new)."""

    cpp_files: list = field(default_factory=list)
    cpp_functions: dict = field(default_factory=dict)
    cpp_texts: dict = field(default_factory=dict)
    python_files: list = field(default_factory=list)
    opdef_files: list = field(default_factory=list)
    launch_files: list = field(default_factory=list)
    yaml_files: list = field(default_factory=list)
    cpp_tokens: dict = field(default_factory=dict)  # path → tokens, shared by the producers
    device_code: dict = field(default_factory=dict)  # path → a file's device-code structure, shared likewise


def compute(inputs, producers: Iterable[str] = PRODUCERS) -> dict[str, OpEffects]:
    """Each op's effects (by ``OpEffects.op``) from every producer, merged."""
    found: dict[str, list[OpEffects]] = {}
    for name in producers:
        for effects in importlib.import_module(name).produce(inputs):
            found.setdefault(effects.op, []).append(effects)
    return {op: parts[0] if len(parts) == 1 else merge(parts) for op, parts in found.items()}


def merge(parts: list[OpEffects]) -> OpEffects:
    """What several kernels (or producers) of one op say, together.

    An argument is written when any part says so (with every piece of evidence); unknown when any part cannot
    tell, except an unknown another part settles (``ArgumentEffect.settled_by``: the device producer's reading
    of a launch the C++ producer could not follow); not written when the parts that name it all read it and
    none writes it. A part that does not name an argument has no say on it: each producer names every tensor
    argument of the kernels it read. A return is known where one part knows it; aclop, host syncs, side
    effects and unknowns add up."""
    first = parts[0]
    names = list(dict.fromkeys(a.name for p in parts for a in p.arguments))
    arguments = []
    for name in names:
        said = [(p, p.argument(name)) for p in parts]
        said = [(p, a) for p, a in said if a is not None]
        settled = {k.language for p, a in said if a.written is not Knowledge.UNKNOWN for k in p.kernels}
        known = [a for _, a in said if not (a.written is Knowledge.UNKNOWN and a.settled_by and a.settled_by in settled)]
        written = [a for a in known if a.written is Knowledge.YES]
        if written:
            arguments.append(_argument(name, Knowledge.YES, evidence=tuple(e for a in written for e in a.evidence)))
        elif any(a.written is Knowledge.UNKNOWN for a in known):
            reasons = [a.unknown_because for a in known if a.written is Knowledge.UNKNOWN and a.unknown_because]
            settles = {a.settled_by for a in known if a.written is Knowledge.UNKNOWN}
            arguments.append(_argument(name, Knowledge.UNKNOWN, unknown_because="; ".join(dict.fromkeys(reasons)), settled_by=settles.pop() if len(settles) == 1 else ""))
        else:
            arguments.append(_argument(name, Knowledge.NO))
    returns = []
    for index in sorted({r.index for p in parts for r in p.returns}):
        candidates = [r for p in parts for r in p.returns if r.index == index]
        returns.append(next((r for r in candidates if r.known), candidates[0]))
    return OpEffects(
        op=first.op,
        kernels=tuple(k for p in parts for k in p.kernels),
        arguments=tuple(arguments),
        returns=tuple(returns),
        aclop=tuple(dict.fromkeys(e for p in parts for e in p.aclop)),
        host_syncs=tuple(dict.fromkeys(e for p in parts for e in p.host_syncs)),
        side_effects=tuple(dict.fromkeys(e for p in parts for e in p.side_effects)),
        unknowns=tuple(dict.fromkeys(u for p in parts for u in p.unknowns)),
    )


def _argument(name: str, written: Knowledge, *, evidence=(), unknown_because: str = "", settled_by: str = ""):
    from opkit.effects.model import ArgumentEffect

    return ArgumentEffect(name, written, tuple(dict.fromkeys(evidence)), unknown_because, settled_by)
