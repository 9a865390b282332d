"""aclnn interfaces as their C++ declares them: which parameters of ``aclnnXGetWorkspaceSize`` are outputs.

CANN's aclnn headers (``op_api/aclnn_*.h``, what ops-nn ships and msOpGen generates) declare inputs as
``const aclTensor *`` and outputs as ``aclTensor *`` (``*Out``/``*Ref`` by convention); a definition may also
list its outputs with ``DFX_OUT(...)`` (vllm-ascend's op_api ``.cpp`` files), which then decides. Read on the
project's one C++ lexer (comments blanked): declarations and definitions alike, each located.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from opkit.formats.cpp_text import CppText, CppTextError

_GET_WORKSPACE = re.compile(r"\b(aclnn\w+?)GetWorkspaceSize\s*\(")
_DFX_OUT = re.compile(r"\bDFX_OUT\s*\(")
_TENSOR_TYPES = ("aclTensor", "aclTensorList")
# the two trailing parameters every GetWorkspaceSize takes: not operands of the op
_PLUMBING = ("workspaceSize", "executor")


@dataclass(frozen=True)
class AclnnParameter:
    name: str
    type: str  # as written, spaces normalised: "const aclTensor *"
    tensor: bool  # aclTensor / aclTensorList
    output: bool  # written by the op: a non-const tensor, or listed in DFX_OUT


@dataclass(frozen=True)
class AclnnInterface:
    name: str  # "aclnnAddRmsNorm"
    parameters: tuple[AclnnParameter, ...]  # in order, without the trailing workspaceSize and executor
    path: str
    line: int
    column: int
    dfx_out: bool = False  # outputs read from DFX_OUT(...) in the definition

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def mentions_interfaces(text: str) -> bool:
    """Whether ``text`` may declare an aclnn interface (cheap: before lexing)."""
    return "GetWorkspaceSize" in text


def read_aclnn_interfaces(path: str, text: str) -> list[AclnnInterface]:
    """Every ``aclnnXGetWorkspaceSize`` declared or defined in ``text``; [] for text the lexer cannot read."""
    if not mentions_interfaces(text):
        return []
    try:
        cpp = CppText(text)
    except CppTextError:
        return []
    code = cpp.code
    found = []
    for m in _GET_WORKSPACE.finditer(code):
        open_at = m.end() - 1
        try:
            close = cpp.closing(open_at)
        except (CppTextError, ValueError):
            continue
        after = code[close + 1 : close + 64].lstrip()
        if not (after.startswith(";") or after.startswith("{")):
            continue  # a call, not a declaration
        items = [code[s:e] for s, e in cpp.items(open_at + 1, close)]
        params = [_parameter(item) for item in items]
        if any(p is None for p in params) or len(params) < 2:
            continue  # a call written with expressions: not a declaration
        params = [p for p in params if p is not None]
        if params[-1].name not in _PLUMBING[1:] and "Executor" not in params[-1].type:
            continue
        operands = params[:-2] if len(params) >= 2 and "uint64_t" in params[-2].type else params[:-1]
        dfx = False
        if after.startswith("{"):
            body = close + 1 + code[close + 1 :].index("{")
            try:
                body_end = cpp.closing(body)
            except (CppTextError, ValueError):
                body_end = body
            outs = _dfx_out(cpp, body, body_end)
            if outs is not None:
                dfx = True
                operands = [AclnnParameter(p.name, p.type, p.tensor, p.tensor and p.name in outs) for p in operands]
        line, column = cpp.position(m.start(1))
        found.append(AclnnInterface(m.group(1), tuple(operands), path, line, column, dfx))
    return found


def _parameter(text: str) -> AclnnParameter | None:
    words = re.findall(r"[A-Za-z_]\w*|\*|&", text)
    if len(words) < 2 or not re.fullmatch(r"[A-Za-z_]\w*", words[-1]):
        return None
    if "=" in text or "(" in text:
        return None
    name = words[-1]
    type_ = " ".join(words[:-1]).replace(" *", " *").strip()
    tensor = any(t in words[:-1] for t in _TENSOR_TYPES)
    # ``const aclTensor *x`` is an input; ``aclTensor *const x`` (rare) still points at writable memory
    base = next((i for i, w in enumerate(words) if w in _TENSOR_TYPES), None)
    const = base is not None and base > 0 and words[base - 1] == "const"
    return AclnnParameter(name, type_, tensor, tensor and not const)


def _dfx_out(cpp: CppText, start: int, end: int) -> set[str] | None:
    m = _DFX_OUT.search(cpp.code, start, end)
    if m is None:
        return None
    try:
        close = cpp.closing(m.end() - 1)
    except (CppTextError, ValueError):
        return None
    return {cpp.code[s:e].strip() for s, e in cpp.items(m.end(), close)}
