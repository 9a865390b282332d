{%- set op = opkit_project(cookiecutter) -%}
{%- if op.style == "extension" -%}
"""Build {{ op.launch.package }}: bisheng compiles csrc/{{ op.name }}.asc (kernel and host code in one file) into {{ op.launch.package }}/_C*.so.

Run on a machine with CANN (its set_env.sh puts bisheng on PATH), torch and torch_npu:

    python setup.py bdist_wheel && pip install dist/*.whl --force-reinstall

--npu-arch {{ op.launch.arch }} is the architecture of --soc {{ op.spec.soc | join(",") }}; NPU_ARCH=dav-XXXX overrides it.
"""

import os
import shutil
import sysconfig
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
NPU_ARCH = os.environ.get("NPU_ARCH", {{ op.launch.arch | cpp_literal }})
SOURCES = [str(HERE / "csrc" / {{ (op.name ~ ".asc") | py_literal }})]


class BishengBuild(build_ext):
    """Compiles each extension with bisheng (-x asc), against torch's and torch_npu's headers and libraries."""

    def build_extension(self, ext):
        import torch
        import torch_npu
        from torch.utils import cpp_extension

        bisheng = shutil.which("bisheng")
        if bisheng is None:
            raise RuntimeError("bisheng is not on PATH: source your CANN's set_env.sh first")
        torch_npu_dir = Path(torch_npu.__file__).resolve().parent
        includes = [*cpp_extension.include_paths(), sysconfig.get_paths()["include"], str(torch_npu_dir / "include")]
        libraries = [str(Path(torch.__file__).resolve().parent / "lib"), str(torch_npu_dir / "lib")]
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
        command = [
            bisheng, "-x", "asc", f"--npu-arch={NPU_ARCH}", "-shared", "-fPIC", "-std=c++17", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
            *ext.sources, "-o", str(target),
            *(f"-I{d}" for d in includes), *(f"-L{d}" for d in libraries), "-ltorch_npu", "-ltorch", "-lc10",
        ]
        self.spawn(command)


setup(
    name={{ op.launch.package | py_literal }},
    version="0.1.0",
    packages=find_packages(include=[{{ op.launch.package | py_literal }}]),
    ext_modules=[Extension({{ (op.launch.package ~ "._C") | py_literal }}, sources=SOURCES)],
    cmdclass={"build_ext": BishengBuild},
)
{% endif -%}
