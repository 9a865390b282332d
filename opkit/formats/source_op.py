"""What an existing op source declares, in one typed model whatever its format (JSON, OpDef C++, yaml).

Each reader of an op source (``msopgen_json.read_prototype``, ``opdef_cpp.read_opdef``,
``op_plugin_yaml.read_entry``) produces a ``SourceOp``; ``opkit.adopt.derive`` turns it into the ``OpSpec``
that `opkit new` builds from a signature. Nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from opkit import msopgen
from opkit.signature import SCALAR_TYPE_DEFAULTS, DType


class AdoptError(ValueError):
    """A source opkit cannot read or adopt: one message with its location (``path:line``)."""

    def __init__(self, message: str, *, path: str = "", line: int = 0):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}: " if self.path and self.line else (f"{self.path}: " if self.path else "")
        return where + self.message


@dataclass(frozen=True)
class SourceTensor:
    """One input or output descriptor: its columns are kept one per supported combination."""

    name: str
    param_type: str  # required | optional | dynamic
    dtypes: tuple[str, ...]  # msOpGen dtype names, one per column
    formats: tuple[str, ...]  # msOpGen format names, one per column
    scalar: bool = False  # OpDef .Scalar(): a PyTorch Scalar operand
    value_depend: bool = False  # OpDef .ValueDepend(...): the host reads the tensor's values
    follow: str = ""  # OpDef .Follow("x"): dtype, format and shape follow input x
    line: int = 0
    declared: tuple[int, int] = (0, 0)  # OpDef: lengths of its DataType and Format lists as written (0: none)
    unknown_shape_formats: int = 0  # OpDef: length of its UnknownShapeFormat list as written (0: none)


@dataclass(frozen=True)
class SourceAttr:
    name: str
    type: str  # msOpGen attr type: int, float, list_int, type, ...
    optional: bool
    default: object = None  # the default as a value (int, float, bool, str, list, DType); None for a required attr
    line: int = 0
    unread_default: str = ""  # OpDef: the default as written when only running the code would give its value


@dataclass(frozen=True)
class Skipped:
    """A construct the reader read past: listed in the output, never dropped silently."""

    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}" if self.line else self.what


@dataclass(frozen=True)
class SocConfig:
    """An OpDef's ``OpAICoreConfig`` block with inputs or outputs of its own: what the SoCs given it build."""

    name: str  # the config's variable
    socs: tuple[str, ...]  # the AddConfig SoCs it is given
    inputs: tuple[SourceTensor, ...] = ()
    outputs: tuple[SourceTensor, ...] = ()


@dataclass(frozen=True)
class SourceOp:
    """One op as its source declares it."""

    path: str
    kind: str  # "msOpGen JSON", "OpDef C++", "op_plugin_functions.yaml entry"
    op_type: str
    inputs: tuple[SourceTensor, ...] = ()
    outputs: tuple[SourceTensor, ...] = ()
    attrs: tuple[SourceAttr, ...] = ()
    socs: tuple[str, ...] = ()  # AddConfig SoC names (families) as written
    aicpu: bool = False  # OpDef this->AICPU(): an AI CPU op (opkit generates AI Core projects)
    soc_configs: tuple[SocConfig, ...] = ()  # OpDef: per-SoC OpAICoreConfig blocks that declare descriptors
    helpers: tuple[str, ...] = ()  # OpDef: functions its constructor calls (SetAscendConfig(...)), not followed
    skipped: tuple[Skipped, ...] = ()
    schema: str = ""  # the PyTorch schema the source itself states (a yaml func; opkit's op_host comment)
    schema_line: int = 0
    entry: tuple[tuple[str, object], ...] = ()  # a yaml entry's own fields, in order, to keep
    line: int = 0

    @property
    def has_descriptors(self) -> bool:
        return bool(self.inputs or self.outputs)


def dtype_default(text: str) -> DType:
    """A ``type`` attr's default (``ge::DT_FLOAT``, ``DT_INT64``, ``DT_UNDEFINED``) as the dtype a schema can
    spell (``ScalarType d=float``, ``long``, ``ScalarType? d=None``); ValueError for one it cannot."""
    ge = text.strip().removeprefix("ge::")
    if ge == "DT_UNDEFINED":
        return msopgen.NONE_ATTR_DEFAULTS["type"]
    for torch_name, _ in SCALAR_TYPE_DEFAULTS.values():
        if msopgen.ge_dtype(torch_name) == ge:
            return DType(torch_name)
    raise ValueError(f"{ge} has no ScalarType default a schema can spell")
