"""The built-in Ascend C tree is the one msOpGen 26.0.0 writes for ``-f pytorch -lan cpp`` (msopgen.md §4, §6).

The expected structure below was read from msOpGen 26.0.0's output (Ascend/msopgen with hicann/asc-tools'
``new_op_project_template``, run as msopgen.md §6 describes): every CMake command with its arguments, in
order, and the presets' cache variables. opkit differs on purpose only where docs/new.md says so:
``vendor_name`` is the project's, and ``ASCEND_CANN_PACKAGE_PATH`` is msOpGen's default rather than the
generating machine's ``$ASCEND_HOME_PATH``.
"""

from __future__ import annotations

import json
import re

import pytest

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
MY_INPLACE = "my_inplace(Tensor(a!) x, Tensor y) -> Tensor z"

TOP = [
    ("cmake_minimum_required", ["VERSION", "3.16.0"]),
    ("project", ["opp"]),
    ("find_package", ["ASC", "REQUIRED"]),
    ("set", ["package_name", "${vendor_name}"]),
    ("npu_op_package", ["${package_name}", "TYPE", "RUN", "CONFIG", "INSTALL_PATH", "${CMAKE_BINARY_DIR}/"]),
    *[
        command
        for sub in ("framework", "op_host", "op_kernel")
        for command in (("if", ["EXISTS", "${CMAKE_CURRENT_SOURCE_DIR}/" + sub]), ("add_subdirectory", [sub]), ("endif", []))
    ],
]
OP_HOST = [
    ("aux_source_directory", ["${CMAKE_CURRENT_SOURCE_DIR}", "ops_srcs"]),
    ("npu_op_code_gen", ["SRC", "${ops_srcs}", "PACKAGE", "${package_name}", "OUT_DIR", "${ASCEND_AUTOGEN_PATH}", "JOIN_OP_DEF", "True"]),
    ("file", ["GLOB", "autogen_aclnn_src", "${ASCEND_AUTOGEN_PATH}/aclnn_*.cpp"]),
    ("set_source_files_properties", ["${autogen_aclnn_src}", "PROPERTIES", "GENERATED", "TRUE"]),
    ("npu_op_library", ["cust_opapi", "ACLNN", "${autogen_aclnn_src}"]),
    ("target_compile_options", ["cust_opapi", "PRIVATE", "-fvisibility=hidden"]),
    ("file", ["GLOB", "group_proto_src", "${ASCEND_AUTOGEN_PATH}/group_op_proto/*.cc"]),
    ("file", ["GLOB", "proto_src", "${ASCEND_AUTOGEN_PATH}/op_proto.cc"]),
    ("set_source_files_properties", ["${group_proto_src}", "PROPERTIES", "GENERATED", "TRUE"]),
    ("set_source_files_properties", ["${proto_src}", "PROPERTIES", "GENERATED", "TRUE"]),
    ("npu_op_library", ["cust_op_proto", "GRAPH", "${ops_srcs}", "${group_proto_src}", "${proto_src}"]),
    ("target_compile_options", ["cust_op_proto", "PRIVATE", "-fvisibility=hidden"]),
    ("file", ["GLOB", "fallback_src", "${ASCEND_AUTOGEN_PATH}/fallback_*.cpp"]),
    ("set_source_files_properties", ["${fallback_src}", "PROPERTIES", "GENERATED", "TRUE"]),
    ("npu_op_library", ["cust_optiling", "TILING", "${ops_srcs}", "${fallback_src}"]),
    ("target_compile_options", ["cust_optiling", "PRIVATE", "-fvisibility=hidden"]),
    ("npu_op_package_add", ["${package_name}", "LIBRARY", "cust_optiling", "cust_opapi", "cust_op_proto"]),
]
OP_KERNEL = [
    ("if", ['"${CMAKE_BUILD_TYPE}x"', "STREQUAL", '"Debugx"']),
    ("npu_op_kernel_options", ["ascendc_kernels", "ALL", "OPTIONS", "-g", "-O0"]),
    ("endif", []),
    ("npu_op_kernel_sources", ["ascendc_kernels", "KERNEL_DIR", "./"]),
    ("npu_op_kernel_library", ["ascendc_kernels", "SRC_BASE", "${CMAKE_CURRENT_SOURCE_DIR}/", "TILING_LIBRARY", "cust_optiling"]),
    ("npu_op_package_add", ["${package_name}", "LIBRARY", "ascendc_kernels"]),
]


def presets(soc: str, vendor: str) -> dict:
    """msOpGen 26.0.0's CMakePresets.json, with opkit's vendor name."""
    variables = {
        "CMAKE_BUILD_TYPE": ("STRING", "Release"), "ENABLE_SOURCE_PACKAGE": ("BOOL", "True"),
        "ENABLE_BINARY_PACKAGE": ("BOOL", "True"), "ASCEND_COMPUTE_UNIT": ("STRING", soc),
        "ENABLE_TEST": ("BOOL", "True"), "vendor_name": ("STRING", vendor),
        "ASCEND_CANN_PACKAGE_PATH": ("PATH", "/usr/local/Ascend/ascend-toolkit/latest"),
        "ASCEND_PYTHON_EXECUTABLE": ("STRING", "python3"), "CMAKE_INSTALL_PREFIX": ("PATH", "${sourceDir}/build_out"),
        "ENABLE_CROSS_COMPILE": ("BOOL", "False"), "CMAKE_CROSS_PLATFORM_COMPILER": ("PATH", "/usr/bin/aarch64-linux-gnu-g++"),
        "ASCEND_PACK_SHARED_LIBRARY": ("BOOL", "False"),
    }  # fmt: skip
    return {
        "version": 1,
        "cmakeMinimumRequired": {"major": 3, "minor": 16, "patch": 0},
        "configurePresets": [
            {
                "name": "default",
                "displayName": "Default Config",
                "description": "Default build using Unix Makefiles generator",
                "generator": "Unix Makefiles",
                "binaryDir": "${sourceDir}/build_out",
                "cacheVariables": {k: {"type": t, "value": v} for k, (t, v) in variables.items()},
            }
        ],
    }


_COMMAND = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)", re.S)
_ARGUMENT = re.compile(r'"[^"]*"|[^\s"]+')


def cmake_commands(text: str) -> list[tuple[str, list[str]]]:
    """The commands of a CMake file and their arguments, comments dropped (enough for these flat files)."""
    code = "\n".join(re.sub(r"#.*", "", line) for line in text.splitlines())
    return [(m.group(1), _ARGUMENT.findall(m.group(2))) for m in _COMMAND.finditer(code)]


def test_parser_sees_every_command():
    assert cmake_commands('if ("${A}x" STREQUAL "Bx")  # c\n  f(a\n b) # g(x)\nendif()') == [
        ("if", ['"${A}x"', "STREQUAL", '"Bx"']),
        ("f", ["a", "b"]),
        ("endif", []),
    ]


@pytest.mark.parametrize(
    ("name", "schema", "op_type", "kernel", "soc", "families"),
    [
        ("my_op", MY_OP, "MyOp", "my_op", "ascend910b1", "ascend910b"),
        ("my_inplace", MY_INPLACE, "MyInplace", "my_inplace", "ascend910b1,ascend910_9391", "ascend910b;ascend910_93"),
    ],
)
def test_tree_is_msopgen_26(generate, name, schema, op_type, kernel, soc, families):
    project = generate(name, schema=schema, dtypes="float", soc=soc)
    tree = project / op_type
    files = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())
    assert files == sorted(
        ["CMakeLists.txt", "CMakePresets.json", "build.sh", "op_host/CMakeLists.txt", f"op_host/{kernel}.cpp",
         "op_kernel/CMakeLists.txt", f"op_kernel/{kernel}.cpp", f"op_kernel/{kernel}_tiling.h"]
    )  # fmt: skip
    assert cmake_commands((tree / "CMakeLists.txt").read_text()) == TOP
    assert cmake_commands((tree / "op_host" / "CMakeLists.txt").read_text()) == OP_HOST
    assert cmake_commands((tree / "op_kernel" / "CMakeLists.txt").read_text()) == OP_KERNEL
    assert json.loads((tree / "CMakePresets.json").read_text()) == presets(families, name)
    assert (tree / "build.sh").stat().st_mode & 0o111


def test_build_script_is_valid_bash_and_uses_the_presets(generate, tmp_path):
    import shutil
    import subprocess

    tree = generate("my_op", schema=MY_OP) / "MyOp"
    script = (tree / "build.sh").read_text()
    assert "--preset=default" in script and "--target binary package" in script
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash to check build.sh's syntax")
    assert subprocess.run([bash, "-n", str(tree / "build.sh")]).returncode == 0
    # Without CANN it stops at once with one message, having written nothing.
    done = subprocess.run([bash, str(tree / "build.sh")], capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and "ASCEND_HOME_PATH is not set" in done.stderr
    assert not (tree / "build_out").exists()
