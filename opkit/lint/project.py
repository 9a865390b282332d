"""What one `opkit lint` call loaded: every file's records, for the cross-file rules."""

from __future__ import annotations

from dataclasses import dataclass, field

from opkit.formats.schema_site import SchemaSite
from opkit.lint.finding import Finding
from opkit.lint.registry import shared_index


@dataclass(eq=False)  # identity: rules cache indexes per project (registry.shared_index)
class LintProject:
    """Everything one `opkit lint` call loaded, so cross-file rules can see all of it."""

    yaml_files: list = field(default_factory=list)
    python_files: list = field(default_factory=list)
    msopgen_files: list = field(default_factory=list)
    opdef_files: list = field(default_factory=list)
    cpp_files: list = field(default_factory=list)  # C++ TORCH_LIBRARY registrations (.cpp, .cc, .asc, .h)
    # the C++ functions kernels may name, by unqualified name (registering files, and headers beside them)
    cpp_functions: dict = field(default_factory=dict)
    # every C++ file of the group by path, its text: where kernel bodies, helpers and aclnn headers are read
    cpp_texts: dict = field(default_factory=dict)
    launch_files: list = field(default_factory=list)  # host C++ launching kernels with <<<>>> (.asc, .cpp)
    # path → the file's C++ tokens (``cpp_tokens.cached_tokens``): the launch reader's, followed again by the effects
    cpp_tokens: dict = field(default_factory=dict)
    # path → a Python module's (tree, nodes by kind): parsed once for the registration and kernel readers
    python_trees: dict = field(default_factory=dict)
    # path → the file's device-code structure (``device_kernels.DeviceCode`` of it alone), read once for the effects
    device_code: dict = field(default_factory=dict)
    schema_sites: list[SchemaSite] = field(default_factory=list)
    input_findings: list[Finding] = field(default_factory=list)
    root: str = ""  # the project directory (one holding opkit.json or CMakePresets.json); "" for the command line's group

    def kinds(self) -> list[str]:
        """The kinds of input file loaded (``yaml``, ``python``, ...): which rule modules a lint needs."""
        present = {"yaml": self.yaml_files, "python": self.python_files, "msopgen": self.msopgen_files, "opdef": self.opdef_files,
                   "cpp": self.cpp_files, "launch": self.launch_files}  # fmt: skip
        return [kind for kind, files in present.items() if files]

    def all_schema_sites(self) -> tuple[SchemaSite, ...]:
        """Every schema of every source, built once: the engine, the parse cache and the cross-file
        rules all ask, and each site keeps its parse result (the project is complete once loaded)."""
        return _all_schema_sites(self)


@shared_index
def _all_schema_sites(project: LintProject) -> tuple[SchemaSite, ...]:
    sites = list(project.schema_sites)
    for source in (*project.yaml_files, *project.python_files, *project.msopgen_files, *project.cpp_files):
        sites.extend(source.schema_sites())
    from opkit.lint.op_context import annotate

    return tuple(annotate(project, sites))
