"""`opkit check`: compile a generated project's C++ in about a second, without the Ascend C toolchain."""

from opkit.check.compile import CheckReport, Diagnostic, SourceCheck, check_project
from opkit.check.toolchain import CheckError, HostHeaders, ToolchainError, find_compiler, find_host_headers

__all__ = [
    "CheckError", "CheckReport", "Diagnostic", "HostHeaders", "SourceCheck", "ToolchainError",
    "check_project", "find_compiler", "find_host_headers",
]  # fmt: skip
