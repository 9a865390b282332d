"""Names derived from an op name, shared by every generator and every rule.

One function per convention, so what opkit writes is by construction what opkit accepts:
UpperCamelCase (torchair's rule for msOpGen op names), msOpGen's own snake_case (file and
kernel names), the aclnn entry point, and the Meta function name op-plugin uses.
"""

from __future__ import annotations

import keyword
import re

IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Reserved words of C++ (the OpDef and kernel are C++) that are not already Python keywords.
CPP_KEYWORDS = frozenset(
    """
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
    co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not
    not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires
    return short signed sizeof static static_assert static_cast struct switch template this
    thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
    wchar_t while xor xor_eq
    """.split()
)


def upper_camel(name: str) -> str:
    """torchair's op-name rule: split on ``_`` and capitalise each part (``my_inplace`` → ``MyInplace``).

    Only the first character of each part changes, so ``npu_conv2d`` → ``NpuConv2d``.
    """
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def msopgen_snake(op_type: str) -> str:
    """msOpGen 26.0.0's file/kernel name for an UpperCamelCase op type (``MatMulV2`` → ``mat_mul_v2``).

    One character at a time: ``_`` goes before an uppercase letter when the previous character is
    lowercase or a digit, or when the previous is uppercase and the next is lowercase.
    """
    out: list[str] = []
    for i, ch in enumerate(op_type):
        if i > 0 and ch.isupper():
            prev = op_type[i - 1]
            nxt = op_type[i + 1] if i + 1 < len(op_type) else ""
            if prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower()):
                out.append("_")
        out.append(ch.lower())
    return "".join(out)


# torch_npu's prefix for its custom ops; CANN's OpType drops it (npu_add_rms_norm → AddRmsNorm).
NPU_PREFIX = "npu_"


def kernel_base(op_name: str) -> str:
    """The part of an op name CANN names the kernel after: ``npu_add_rms_norm`` → ``add_rms_norm``."""
    stripped = op_name.removeprefix(NPU_PREFIX)
    return stripped if IDENTIFIER_RE.match(stripped) else op_name


def op_type(op_name: str) -> str:
    """The msOpGen OpType of an op: UpperCamelCase of ``kernel_base`` (``npu_swiglu`` → ``Swiglu``)."""
    return upper_camel(kernel_base(op_name))


def aclnn_name(op_name: str) -> str:
    """The aclnn entry point a new op's gen_opapi ``exec`` calls: ``my_op`` → ``aclnnMyOp``,
    ``npu_add_rms_norm`` → ``aclnnAddRmsNorm`` (as CANN names its own)."""
    return "aclnn" + op_type(op_name)


def aclnn_for_op_type(op_type_name: str) -> str:
    return "aclnn" + op_type_name


def op_type_of_exec(exec_text: str) -> str | None:
    """The OpType a gen_opapi ``exec`` calls (``aclnnScale, x, out`` → ``Scale``), or None for another callee."""
    callee = exec_text.partition(",")[0].strip()
    return callee[len("aclnn") :] if callee.startswith("aclnn") and len(callee) > len("aclnn") else None


def python_identifier(name: str) -> str:
    """``name`` as a Python parameter/variable: keywords and ``self`` get a trailing ``_``."""
    return f"{name}_" if keyword.iskeyword(name) or name == "self" else name


def cpp_identifier(name: str) -> str:
    """``name`` as a C++ identifier: C++ and Python keywords get a trailing ``_``."""
    return f"{name}_" if name in CPP_KEYWORDS or keyword.iskeyword(name) else name


def meta_function_name(op_name: str) -> str:
    """op-plugin's name for a Meta function in ``_meta_registrations.py``."""
    return f"{op_name}_meta"


def lower_camel(name: str) -> str:
    """aclnn parameter names: ``attr_1`` → ``attr1``, ``x`` → ``x``."""
    camel = upper_camel(name)
    return camel[:1].lower() + camel[1:]


def name_problem(name: str, *, what: str = "name") -> str | None:
    """Why ``name`` cannot be an op or argument name in Python, C++ and a file path, or None."""
    if not name:
        return f"{what} is empty"
    if "/" in name or "\\" in name or ".." in name:
        return f"{what} {name!r} contains a path separator or '..'"
    if not IDENTIFIER_RE.match(name):
        return f"{what} {name!r} is not an identifier (letters, digits and '_', not starting with a digit)"
    if keyword.iskeyword(name):
        return f"{what} {name!r} is a Python keyword"
    if name in CPP_KEYWORDS:
        return f"{what} {name!r} is a C++ keyword"
    return None


def default_style(name: str) -> str:
    """op-plugin, except for a name ending in '_': torchgen reads it as an ATen in-place op that must
    return its input, which cannot enter a graph, while custom_op takes the name as it is."""
    return "custom-op" if name.endswith("_") and not name.startswith("__") else "op-plugin"
