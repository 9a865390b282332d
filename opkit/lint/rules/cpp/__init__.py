"""C++ registration rules (C): ``TORCH_LIBRARY`` defs and impls checked against each other and the schema.

torch checks a C++ kernel when it is registered: it infers a schema from the function's C++ type
(``c10::impl::infer_function_schema``: ``const at::Tensor &`` is ``Tensor``, ``c10::optional<at::Tensor>``
``Tensor?``, ``int64_t`` and ``c10::SymInt`` both ``int``, ``double`` ``float``) and refuses a kernel whose
inferred schema differs from the def's in the number or types of arguments or returns (names and alias
annotations are not compared). The library then fails to load. Findings sit on the impl's line.

One rule per module, named after the rule; ``common`` holds what several share.
"""

from opkit.lint.rules.cpp import kernel_schema_mismatch  # noqa: F401  C001
from opkit.lint.rules.cpp import kernel_parameter_order  # noqa: F401  C002
from opkit.lint.rules.cpp import op_without_kernel  # noqa: F401  C003
from opkit.lint.rules.cpp import kernel_for_undefined_op  # noqa: F401  C004
from opkit.lint.rules.cpp import block_assumption  # noqa: F401  C005
