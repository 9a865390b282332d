"""Turn what torch raised while compiling into a stage, a plain message and the next action.

The stage is where the root cause lies, which is not always where it surfaced: a missing Meta function
surfaces while Dynamo traces with fake tensors, but the fix is a registration. Next actions follow the
seed knowledge base's diagnosis guide (problem class → evidence → likely cause → smallest next step).
"""

from __future__ import annotations

import os
import re
import sys

from opkit import naming
from opkit.verify.npugraph_ex.requirements import pip_name
from opkit.verify.report import GraphBreak, Problem, Stage

_USER_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_DEBUG_OP_RE = re.compile(r"(?:unsupported operator:|TypeError|failed while attempting to run meta for)\s+([A-Za-z_][\w]*\.[\w.]+?)(?:[:\s]|$)")

BACKEND_NEXT_ACTION = {
    "npugraph_ex": (
        "aot_eager passes the front half, so this is the TorchAir/aclgraph layer: read TorchAir "
        "docs/zh/appendix/cases/graph_failed_cases.md and rerun with the npugraph_ex debug logs "
        "(docs/zh/npugraph_ex/dfx/debug_save.md) to find the failing pass"
    ),
    "inductor": "the Inductor code generator failed: rerun with TORCH_LOGS=output_code and read the first error",
}


# Defects of the torch-npu wheel's own backend code, recognised by their text: (evidence, what it is, next action).
# Each fails the same way on an NPU, so opkit reports it as the wheel's, not the op's.
KNOWN_BACKEND_DEFECTS = (
    (
        "is not pickleable",
        "npugraph_ex serialises every graph it compiles (acl_graph_cache_utils.convert_to_bytes) and cannot pickle an "
        "auto_functionalized node's op, which stays in the graph when input_inplace_pass=False leaves a mutated graph "
        "input functionalized; it fails the same way on an NPU",
        "leave input_inplace_pass at its default (True), or wait for a torch-npu whose serialiser handles "
        "auto_functionalized",
    ),
    (
        "'CompilerConfig' object has no attribute 'experimental_config'",
        "torch-npu 2.13.0's npugraph_ex special-cases any op named npu.npu_weight_quant_batchmatmul "
        "(npu_fx_compiler.py sets config.experimental_config, which its own CompilerConfig lacks), so every graph "
        "holding an op of that name fails to compile, on an NPU too",
        "give the op another name (the special case matches the name only), or wait for a torch-npu that fixes it",
    ),
)


_OPKIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the opkit package


def is_opkit_file(filename: str) -> bool:
    """A frame of opkit's own code (its harness calling the op), not the user's."""
    return os.path.abspath(filename).startswith(_OPKIT_DIR + os.sep)


def frame_location(filename: str, line: int, func: str) -> str:
    return f"{filename}:{line} in {func}"


def innermost_user_frame(frames: list[tuple[str, int, str]]) -> tuple[str | None, bool]:
    """(location of the innermost frame that is not opkit's, whether opkit's own frames were there too);
    frames are (file, line, function), outermost first."""
    users = [f for f in frames if not is_opkit_file(f[0])]
    return (frame_location(*users[-1]) if users else None), len(users) < len(frames)


def user_location(text: str) -> str | None:
    """The innermost user frame Dynamo printed under "from user code:" (opkit's own harness frames skipped)."""
    return _frames_in(text)[0]


def _frames_in(text: str) -> tuple[str | None, bool]:
    section = text.split("from user code:", 1)[-1]
    frames = [(f["file"], int(f["line"]), f["func"]) for f in _USER_FRAME_RE.finditer(section)]
    return innermost_user_frame(frames)


# How torch says a Python Meta/fake kernel returned another structure than the schema's returns
# (measured on torch 2.13: the dispatcher converts the returned value to the schema's return types).
_RETURN_STRUCTURE = (
    (re.compile(r"is not an instance of 'sequence'"), "one value where the schema declares several returns (a tuple)"),
    (re.compile(r"Unable to cast [(\[].*\bto Tensor\b", re.S), "a tuple or list where the schema declares one Tensor"),
    (re.compile(r"to return None but it returned something else"), "a value where the schema declares no return ('-> ()')"),
    (re.compile(r"Unable to cast Python instance of type"), "a value of another type than the schema's return"),
)
_SIGNATURE_MISMATCH = re.compile(r"takes \d+ positional arguments? but|missing \d+ required (?:positional|keyword-only) argument|got an unexpected keyword argument|got multiple values for argument")


def returns_text(sig) -> str:
    """A schema's returns as written: ``(Tensor a, Tensor b)``, ``Tensor``, ``()``."""
    return str(sig).rpartition(" -> ")[2]


_FAKE_CALL_ERROR_RE = re.compile(r"\): got (\w+\(.*?\))\s*(?:\n|Hint:|$)")


def return_mismatch(text: str) -> str | None:
    """What the Meta function returned instead of the schema's returns, read from torch's error; None if not that."""
    return next((what for pattern, what in _RETURN_STRUCTURE if pattern.search(text)), None)


def _return_action(meta: str, returns: str | None) -> str:
    what = f"what the schema returns, {returns}" if returns else "what the schema returns"
    return f"make {meta} return exactly {what}: None for '()', one tensor for 'Tensor', a tuple of as many tensors as there are returns"


def meta_call_hint(exc: BaseException, meta: str, params: str, returns: str) -> tuple[str, str]:
    """(what is wrong, the next action) for a Meta function that fails when called on fake tensors."""
    text = str(exc)
    returned = return_mismatch(text)
    if returned is not None:
        return f"it returns {returned}; the schema returns {returns}", _return_action(meta, returns)
    raised = f"{type(exc).__name__}: {first_line(text)}"
    if isinstance(exc, TypeError) and _SIGNATURE_MISMATCH.search(text):
        return raised, f"make {meta} take every schema parameter, defaulted ones included ({params}), in schema order"
    return raised, f"fix {meta}: call it on tensors of the sample shapes (in eager, with device='meta') to see the line that raises"


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), text.strip())


def _op_from_text(text: str, fallback: str | None) -> str | None:
    m = _DEBUG_OP_RE.search(text)
    if m is None:
        return fallback
    ns, _, rest = m.group(1).partition(".")
    return f"{ns}::{rest.split('.')[0]}"


def meta_name(op: str | None) -> str:
    return naming.meta_function_name(op.split("::")[-1]) if op else "the Meta function"


def dynamo_failure(
    exc: BaseException, *, sole_op: str | None, schema_params: dict[str, str], user_code: bool = False, schema_returns: dict[str, str] | None = None
) -> tuple[Problem, GraphBreak]:
    """A fullgraph=True tracing failure: every one is a graph break; some have a registration cause.

    ``user_code``: the target is the user's function or module, so a break the op's own text does not
    explain is located in their code, not blamed on the op. A break whose frames are all opkit's own (its
    harness calling the op) is said to be inside opkit's call, never "in your code". ``schema_returns``:
    op -> its schema's returns, named when the Meta function returns another structure."""
    schema_returns = schema_returns or {}
    text = str(exc)
    cause = exc.__cause__
    op = _op_from_text(text, None if user_code else sole_op)
    location, in_opkit = _frames_in(text)
    brk = GraphBreak(reason=_break_reason(text), location=location)
    lowered = text.lower()
    returned = return_mismatch(f"{text}\n{cause}") if "fake tensor" in lowered or "run meta for" in lowered else None
    if "does not support running with fake tensors" in lowered or type(cause).__name__ == "UnsupportedOperatorException":
        problem = Problem(
            Stage.REGISTRATION,
            "missing_meta",
            f"no Meta/fake function is registered for {op or 'a custom op'}, so Dynamo cannot trace it with fake tensors",
            "register it before torch.compile runs: op-plugin style `m = Library(\"npu\", \"IMPL\", \"Meta\")` + "
            f"`@impl(m, \"{(op or 'my_op').split('::')[-1]}\")`, custom_op style `@<op>.register_fake`",
            op,
            text,
        )
    elif returned is not None:
        returns = schema_returns.get(op) if op else None
        problem = Problem(
            Stage.META,
            "meta_returns",
            f"{meta_name(op)} returns {returned}{f'; the schema returns {returns}' if returns else ''}, so Dynamo cannot trace the op with fake tensors",
            _return_action(meta_name(op), returns),
            op,
            text,
        )
    elif "typeerror when making fake tensor call" in lowered or isinstance(cause, TypeError):
        params = schema_params.get(op)  # None for an unknown op: no hint of parameters
        want = f" ({params})" if params else ""
        problem = Problem(
            Stage.REGISTRATION,
            "meta_signature",
            f"{meta_name(op)} does not accept the schema's arguments: {cause or first_line(text)}",
            f"make {meta_name(op)} take exactly the schema's parameters, in schema order{want}",
            op,
            text,
        )
    elif any(
        s in lowered
        for s in ("data-dependent", "data dependent", "tensor.item()", "dynamic shape operator", "capture_scalar_outputs", "tolist")
    ):
        problem = Problem(
            Stage.DYNAMO,
            "data_dependent",
            "a value computed on the device is read back on the host (.item(), .tolist(), or a data-dependent shape), "
            "which breaks the graph and forces a device sync",
            "keep the value a tensor (use torch.where/masking instead of Python control flow on it), or move that "
            "logic outside the compiled region; npugraph_ex needs static shapes",
            None,
            text,
        )
    elif "when making fake tensor call" in lowered:
        inner = _FAKE_CALL_ERROR_RE.search(text)
        problem = Problem(
            Stage.META,
            "meta_raises",
            f"{meta_name(op)} raises when Dynamo calls it with fake tensors: {inner.group(1) if inner else cause or first_line(text)}",
            f"fix {meta_name(op)}: call it on tensors of the sample shapes (in eager, with device='meta') to see the line that raises",
            op,
            text,
        )
    elif location is None and in_opkit:
        # every frame is opkit's own harness calling the op: the op itself broke the graph, not the user's code
        problem = Problem(
            Stage.DYNAMO,
            "graph_break",
            f"Dynamo could not trace {op or 'the op'} in one graph: the break is inside opkit's call of the op, not in your code: {first_line(text)}",
            f"the op's registration (schema, Meta function) is what Dynamo failed on: read the detail below; "
            f"torch._dynamo.explain(torch.ops.{(op or 'ns::op').replace('::', '.')})(*args) shows the same break",
            op,
            text,
        )
    else:
        where = f" at {location}" if location else ""
        problem = Problem(
            Stage.DYNAMO,
            "graph_break",
            f"Dynamo could not trace the model in one graph{where}: {first_line(text)}",
            f"fix the break in your code{where} (a print(), a call Dynamo cannot trace, Python on tensor values); "
            "torch._dynamo.explain(fn)(*args) lists every break",
            op,
            text,
        )
    return problem, brk


def _break_reason(text: str) -> str:
    reason = first_line(text)
    m = re.search(r"Developer debug context:\s*(.+)", text)
    return f"{reason} ({m.group(1).strip()})" if m else reason


_ALIAS_OUTPUT = "output has alias annotations"
_OPTION_REFUSED = "not in optional list"  # npugraph_ex's option check (configs/_option_base.py)
_WHEEL_PACKAGE = "/torch_npu/dynamo/"  # where the unpacked wheel's npugraph_ex lives (opkit.torch_npu_wheel)


def _raised_by_backend_itself(exc: BaseException) -> bool:
    """The failure came from the backend's own code before AOTAutograd ran (an option it refuses, its own
    setup): its traceback, chained causes included, passes through no AOTAutograd frame
    (torch/_functorch) and through the backend's package. Without a traceback it is not known."""
    import traceback

    files: list[str] = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        files += [frame.filename.replace("\\", "/") for frame in traceback.extract_tb(exc.__traceback__)]
        exc = exc.__cause__ or exc.__context__
    return bool(files) and not any("/_functorch/" in f for f in files) and any(_WHEEL_PACKAGE in f for f in files)




def missing_module(exc: BaseException) -> ModuleNotFoundError | None:
    """The ModuleNotFoundError behind ``exc`` (Dynamo wraps a backend's error: ``inner_exception``, ``__cause__``)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        e = pending.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ModuleNotFoundError) and e.name:
            return e
        pending += [getattr(e, "inner_exception", None), e.__cause__, e.__context__]
    return None


def _importing_frame(exc: BaseException) -> str | None:
    """``npugraph_ex/ops/_tagged_event.py:4``: the innermost frame of the wheel's code the import failed in."""
    tb, found = exc.__traceback__, None
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename.replace("\\", "/")
        if _WHEEL_PACKAGE in path:
            found = f"{path.split(_WHEEL_PACKAGE, 1)[1]}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def missing_module_problem(exc: BaseException, *, stage: Stage, backend: str, sole_op: str | None) -> Problem | None:
    """A module the backend's code imports is not installed: say which, and the ``pip install`` that fixes it."""
    error = missing_module(exc)
    if error is None:
        return None
    frame = _importing_frame(error)
    where = f"{backend}'s code from the torch-npu wheel ({frame})" if frame else f"the code backend {backend} ran"
    return Problem(
        stage,
        "missing_module",
        f"{where} imports {error.name!r}, which is not installed in this Python ({sys.executable}); "
        "the op itself was not at fault",
        f"pip install {pip_name(error.name)}   (a dependency opkit declares; an install with --no-deps leaves it out)",
        sole_op,
        str(error),
    )


def compile_failure(
    exc: BaseException,
    *,
    backend: str,
    reached_aot_graph: bool,
    sees_aot_graph: bool,
    sole_op: str | None,
    data_dependent: tuple[str, ...] = (),
) -> Problem:
    """A failure after Dynamo produced its graph: AOT functionalization, or the backend itself.

    ``data_dependent``: ops of the functionalized graph whose output size depends on data; npugraph_ex's
    converter crashes on them (range checks on unbacked sizes), which is the reason to report."""
    inner = getattr(exc, "inner_exception", None) or exc
    text = str(inner)
    # A missing module fails where it is imported, whatever graph was reached: the backend's compile.
    missing = missing_module_problem(exc, stage=Stage.BACKEND, backend=backend, sole_op=sole_op)
    if missing is not None:
        return missing
    if data_dependent and reached_aot_graph:
        return Problem(
            Stage.BACKEND,
            "data_dependent",
            f"{', '.join(data_dependent)} has an output size that depends on the data (an unbacked SymInt), and "
            f"{backend} cannot compile it: {type(inner).__name__}: {first_line(text)}",
            "npugraph_ex captures static shapes: give the op a fixed-size output (pad to a bound and return the "
            "count as a tensor), or keep it out of the compiled region",
            data_dependent[0],
            text,
        )
    if _ALIAS_OUTPUT in text:
        m = re.search(r"operator whose output has alias annotations: ([\w:.]+)\(", text)
        op = m.group(1).split(".")[0] if m else sole_op
        return Problem(
            Stage.AOT_FUNCTIONALIZATION,
            "returns_mutated_input",
            f"{op} returns an input it mutates (a '-> Tensor(a!)' return); AOTAutograd cannot functionalize a custom "
            "op whose output aliases an input, although Dynamo alone traces it",
            "do not return the mutated argument: declare the op '-> ()' (or return only fresh tensors) and read the "
            "result from the mutated input; the Meta function must then return None or fresh tensors",
            op,
            text,
        )
    if sees_aot_graph and not reached_aot_graph and not _raised_by_backend_itself(inner) or "functionaliz" in text.lower():
        return Problem(
            Stage.AOT_FUNCTIONALIZATION,
            "functionalization",
            f"AOTAutograd could not functionalize the graph: {first_line(text)}",
            "check the schema's alias annotations: every mutated tensor is 'Tensor(a!)', no return aliases an input, "
            "and torch.library.opcheck(op, args) passes",
            sole_op,
            text,
        )
    if _OPTION_REFUSED in text:
        return Problem(
            Stage.BACKEND,
            "backend_option",
            f"backend {backend} refused an option before compiling anything: {first_line(text)}",
            "pass each option of torch.compile(options=...) with a value its CompilerConfig lists "
            "(npugraph_ex: configs/compiler_config.py), or leave it out for the default",
            sole_op,
            text,
        )
    for evidence, what, action in KNOWN_BACKEND_DEFECTS:
        if evidence in text:
            return Problem(Stage.BACKEND, "backend_defect", f"backend {backend} failed to compile the captured graph: {what}", action, sole_op, text)
    return Problem(
        Stage.BACKEND,
        "backend_compile",
        f"backend {backend} failed to compile the captured graph: {first_line(text)}",
        BACKEND_NEXT_ACTION.get(backend, "rerun with backend='aot_eager' to confirm the front half passes, then read the backend's error"),
        sole_op,
        text,
    )


def runtime_failure(exc: BaseException, *, backend: str, sole_op: str | None, call: str | None = None) -> Problem:
    """The graph compiled but failed when it ran: the first call captures, later ones replay."""
    first = call is None or call in ("capture", "shape 1")
    stage = Stage.CAPTURE if first else Stage.REPLAY
    missing = missing_module_problem(exc, stage=stage, backend=backend, sole_op=sole_op)
    if missing is not None:
        return missing
    return Problem(
        stage,
        "graph_run",
        f"the graph compiled by {backend} failed on the {call or 'first'} call: {type(exc).__name__}: {first_line(str(exc))}",
        "compare with eager: if eager passes, the kernel sees different inputs in the graph (check Meta strides and "
        "dtypes, and that mutated inputs are declared Tensor(a!))",
        sole_op,
        str(exc),
    )
