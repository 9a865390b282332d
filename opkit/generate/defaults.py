"""Defaults said aloud: what `opkit new` chose that is likely wrong for this op, with the option that changes it.

Two cases (docs/new-and-update.md, "Defaults said aloud"):

- a tensor whose name reads as an index, offset, length or mask (``slot_mapping``, ``indices``,
  ``group_list``, ``seq_lens``) that the dtype columns leave at float types: a warning with the
  ``--dtypes`` (inputs) or ``--output NAME=dtype:`` (outputs) to pass. opkit keeps the float default
  rather than guess an int type from a name: int32 and int64 are both common (vllm-ascend's
  ``slot_mapping`` is int32, ``group_list`` int64), and a wrong guess would be as silent as today's.
- several fresh outputs without their own ``--output`` rules: every one is sized and typed like
  ``--out-like``; a note names the rule each got and the ``--output`` that changes one.

Nothing here imports torch; the suggestions are commands opkit accepts (tests run them).
"""

from __future__ import annotations

import re
import shlex

from opkit import msopgen
from opkit.generate.spec import OpSpec, format_dtypes

# Words that, as a whole name or a part of one, say a tensor holds positions, counts or flags, not values.
INDEX_WORDS = frozenset(
    "index indices idx idxs ids offset offsets len lens length lengths seqlen seqlens mask masks mapping slot slots "
    "position positions loc table tables count counts num nums argmax argmin shape shapes size sizes flag flags counter counters".split()
)
# Whole names that read so though no part does on its own.
INDEX_NAMES = frozenset({"group_list", "cu_seqlens", "block_table"})
_WORD_RE = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
INDEX_DTYPE = "int32"  # what the suggestion writes; the warning says to choose (int64 is as common)


def _words(name: str) -> list[str]:
    """``srcOffsetRankTokenIdx2`` -> src, offset, rank, token, idx (a trailing number is an index of the name)."""
    return [w.lower().rstrip("0123456789") for part in name.split("_") for w in _WORD_RE.findall(part)]


def reads_as_index(name: str) -> bool:
    """``slot_mapping``, ``indices``, ``group_list``, ``seq_lens``, ``topkIdx``: a name that reads as an index,
    offset, length or mask."""
    return name.lower() in INDEX_NAMES or any(word in INDEX_WORDS for word in _words(name))


_FLOAT_TYPES = frozenset({"DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_DOUBLE"})


def _is_float(dtype: str) -> bool:
    return msopgen.DTYPES.get(dtype) in _FLOAT_TYPES


def index_dtype_warnings(spec: OpSpec) -> list[str]:
    """Index-like tensors left at float dtypes, each with the option that makes it an integer."""
    prototype = spec.prototype()
    own_rules = {r.name: r for r in spec.outputs}
    inputs = {d.name: d for d in prototype.inputs}
    columns = dict(spec.descriptor_dtypes)
    warnings = []
    floated_inputs = [n for n, d in inputs.items() if reads_as_index(n) and n not in columns and all(_is_float(t) for t in d.types)]
    if floated_inputs:
        fixed = format_dtypes(spec.dtypes, (*spec.descriptor_dtypes, *((n, (INDEX_DTYPE,) * len(spec.dtypes)) for n in floated_inputs)))
        names = ", ".join(floated_inputs)
        warnings.append(
            f"{names} {'reads' if len(floated_inputs) == 1 else 'read'} as an index, offset, length or mask, but "
            f"{'its' if len(floated_inputs) == 1 else 'their'} dtypes are {','.join(spec.dtypes)} (the --dtypes default for every tensor): "
            f"if {'it holds' if len(floated_inputs) == 1 else 'they hold'} integers, pass --dtypes {shlex.quote(fixed)} (or int64, bool, as the kernel reads them)"
        )
    sig = spec.signature
    fresh = [n for r, n in zip(sig.returns, sig.output_names) if r.alias is None]
    for name in fresh:
        rule = spec.output_rule(name)
        if not reads_as_index(name) or name in columns or (name in own_rules and own_rules[name].dtype):
            continue
        if not all(_is_float(t) for t in _like_dtypes(spec, prototype, rule.like)):
            continue
        warnings.append(
            f"output {name} reads as an index, offset, length or mask, but it takes the dtype of {rule.like} "
            f"({','.join(_like_dtypes(spec, prototype, rule.like))}): if it holds integers, pass --output {shlex.quote(_with_dtype(rule, name))}"
        )
    return warnings


def _like_dtypes(spec: OpSpec, prototype: msopgen.Prototype, like: str) -> tuple[str, ...]:
    desc = next((d for d in prototype.inputs if d.name == like), None)
    return tuple(dict.fromkeys(desc.types)) if desc is not None else spec.dtypes


def _with_dtype(rule, name: str) -> str:
    own = str(rule) if rule.shape is not None or rule.size_arg else f"{name}="
    return own + ("," if not own.endswith("=") else "") + f"dtype:{INDEX_DTYPE}"


def output_rule_notes(spec: OpSpec) -> list[str]:
    """Several fresh outputs and no --output rule: what each got, and how to change one."""
    sig = spec.signature
    fresh = [n for r, n in zip(sig.returns, sig.output_names) if r.alias is None]
    if len(fresh) < 2 or spec.outputs:
        return []
    got = ", ".join(f"{n}=like:{spec.output_rule(n).like}" for n in fresh)
    example = fresh[-1]
    like = spec.output_rule(example).like
    rule = f"{example}=like:{like},dtype:{INDEX_DTYPE}"
    return [
        f"{len(fresh)} outputs and no --output rule: each is sized and typed like an input ({got}); where one differs, "
        f"give its rule, e.g. --output {shlex.quote(rule)}, or size:[{like}.0, ...] for another shape"
    ]
