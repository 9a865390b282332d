"""npugraph_ex off the NPU: torch_npu's own npugraph_ex compiler, run with the NPU runtime stood in for.

* ``opkit.torch_npu_wheel`` (below verify, since ``opkit check`` reads the wheel's C++ headers too): the
  torch-npu wheel matching the installed torch, downloaded and unpacked (never installed);
* ``runtime`` and ``npu``: the stand-in ``torch_npu`` / ``torch.npu`` modules npugraph_ex reads;
* ``capture``: the aclgraph capture emulator (record at capture, reject host syncs, replay on fixed buffers);
* ``observe``: what npugraph_ex did during a check (graphs around its passes, captures, swallowed failures);
* ``shadow``: a user's file that defines an op npugraph_ex defines too is the registration verified.

``load()`` imports the package from the unpacked wheel as the top-level ``npugraph_ex`` (how it imports
itself), behind the stand-in; ``backend(options)`` is ``get_npu_backend(CompilerConfig(mode="npugraph_ex"))``.
Importing this package imports no torch.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any

from opkit.torch_npu_wheel import ENV_VAR, SUPPORTED, Wheel, WheelUnavailable, obtain

__all__ = ["ENV_VAR", "SUPPORTED", "Emulation", "WheelUnavailable", "backend", "load", "unavailable_reason"]


@dataclass(frozen=True)
class Emulation:
    wheel: Wheel
    module: Any  # the imported npugraph_ex package
    scope: Any  # scope.Scope: npugraph_ex's process-wide changes, in force only inside a check

    @property
    def note(self) -> str:
        from opkit.verify.npugraph_ex.runtime import NOT_EMULATED

        return (
            f"npugraph_ex ran emulated: the compiler of torch-npu {self.wheel.version} ({self.wheel.described}) with "
            "opkit's stand-in NPU runtime; capture and replay were emulated on host memory; not visible here: "
            f"{NOT_EMULATED}"
        )


@functools.lru_cache(maxsize=1)
def load() -> Emulation:
    """Import npugraph_ex from the unpacked wheel behind the stand-in runtime (once per process), and
    record what it and the stand-in change process-wide, then undo it: ``Emulation.scope.inside()``
    puts it back for one check (``opkit.verify.npugraph_ex.scope``)."""
    from opkit.verify.npugraph_ex import observe, runtime, scope

    wheel = obtain()
    path = str(wheel.dynamo_dir)
    loaded = sys.modules.get("npugraph_ex")
    if loaded is not None and not str(getattr(loaded, "__file__", "")).startswith(path):
        raise WheelUnavailable(f"another npugraph_ex is already imported in this process ({loaded.__file__})")
    outside = scope.record(scope.import_patch_points(), runtime.slots())
    sys.path.insert(0, path)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # the checked tree stays as checked
    try:
        with scope.import_side_effects_undone():
            runtime.install()
            import npugraph_ex  # type: ignore[import-not-found]

        observe.install(npugraph_ex)
        dicts, slots = scope.torch_patch_points()
        unpatched = scope.record(dicts, slots)
        backend_of(npugraph_ex)  # its first get_npu_backend patches torch (add_npu_patch, run once)
        dicts, slots = scope.torch_patch_points()
        held = scope.Scope()
        held.add(scope.changed(unpatched, scope.record(dicts, slots)))
        held.add(scope.changed(outside, scope.record(scope.import_patch_points(), runtime.slots())))
    except BaseException:  # the stand-in and the import's writes are undone; the error says why
        for slot, value, _ in scope.changed(outside, scope.record(scope.import_patch_points(), runtime.slots())):
            slot.write(value)
        raise
    finally:
        sys.path.remove(path)  # its submodules import through the package's own __path__
        sys.dont_write_bytecode = writes_bytecode
    held.leave()
    return Emulation(wheel, npugraph_ex, held)


def unavailable_reason() -> str | None:
    """None when the emulation can run here, else why not (one sentence)."""
    try:
        load()
    except WheelUnavailable as exc:
        return str(exc)
    except ModuleNotFoundError as exc:
        from opkit.verify.npugraph_ex.requirements import pip_name

        return (
            f"npugraph_ex from the torch-npu wheel imports {exc.name!r}, which is not installed in this Python "
            f"({sys.executable}): pip install {pip_name(exc.name or '')}"
        )
    except Exception as exc:  # the wheel's package failed to import behind the stand-in
        return f"npugraph_ex from the torch-npu wheel does not import behind opkit's stand-in: {type(exc).__name__}: {exc}"
    return None


def backend_of(module, options: dict | None = None):
    """npugraph_ex's Dynamo backend, exactly as the ``npugraph_ex`` entry point builds it, with ``options``."""
    config = module.CompilerConfig()
    config.mode = "npugraph_ex"
    # Its pattern fusion rewrites torch_npu's own ops (npu::npu_add_rms_norm, ...), whose schemas only the
    # real torch_npu defines: off the NPU it is off, and the report says so (runtime.NOT_EMULATED).
    config.pattern_fusion_pass = False
    for key, value in (options or {}).items():
        setattr(config, key, value)  # npugraph_ex validates each option against its config
    return module.get_npu_backend(compiler_config=config)


def backend(options: dict | None = None):
    """The backend of the loaded npugraph_ex; call it inside ``load().scope.inside()``."""
    return backend_of(load().module, options)
