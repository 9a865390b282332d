"""Every `custom:` schema of the real op_plugin_functions.yaml through `opkit new` → `opkit lint` → `opkit verify`.

    python benchmarks/corpus_ops.py [--limit N] [--no-verify] [--aten] [--adopt] [--show N]

One process, in-process calls (no subprocess per op), the built-in Ascend C tree. Each schema ends as:
ok (generated, lints without errors, verifies), refused (a documented refusal that prints a corrected
schema), refused-other (another SpecError), lint / verify failures, or a crash (any other exception,
which must never happen). ``--aten`` runs ATen's functional schemas from torchgen's native_functions.yaml
instead, renamed as custom ops (``add.Tensor`` → ``add_tensor``), generate and lint only unless
``--verify`` is given. ``--adopt`` adopts each entry instead (``opkit new --from corpus.yaml --op NAME``:
the entry's own func, versions and gen_opapi kept), which subsumes generating from its func.
tests/generate/test_corpus_ops.py runs the same function, adopting.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS_YAML = REPO.parent / "shared" / "corpus" / "op-plugin" / "op_plugin_functions.yaml"
CORRECTED = "Corrected schema: "


@dataclass
class CorpusRun:
    counts: collections.Counter = field(default_factory=collections.Counter)
    failures: dict[str, list[str]] = field(default_factory=lambda: collections.defaultdict(list))
    seconds: float = 0.0

    @property
    def attempted(self) -> int:
        """Schemas that are not documented refusals."""
        return sum(self.counts.values()) - self.counts["refused"]

    @property
    def ok_share(self) -> float:
        return self.counts["ok"] / self.attempted if self.attempted else 1.0

    def summary(self) -> str:
        total = sum(self.counts.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return f"{total} schemas: {parts}; {self.counts['ok']}/{self.attempted} ({self.ok_share:.1%}) of those not refused by design in {self.seconds:.0f} s"


def corpus_schemas(path: Path = CORPUS_YAML) -> list[tuple[str, str]]:
    """(op name, func) of every `custom:` entry."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [(e["func"].split("(", 1)[0].split(".", 1)[0], e["func"]) for e in data["custom"]]


def aten_schemas() -> list[tuple[str, str]]:
    """ATen's functional schemas, each renamed as a custom op ``name_overload`` (no namespace, no overload)."""
    import os

    import torchgen
    import yaml
    from torchgen.model import FunctionSchema, SchemaKind

    path = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")
    with open(path, encoding="utf-8") as f:
        entries = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    out = []
    for e in entries:
        try:
            fs = FunctionSchema.parse(e["func"])
        except Exception:
            continue
        if fs.kind() is not SchemaKind.functional or str(fs.name.name).startswith("_"):
            continue
        name = str(fs.name.name) + (f"_{fs.name.overload_name}" if fs.name.overload_name else "")
        head = e["func"].split("(", 1)[0]
        out.append((name, name + e["func"][len(head) :]))
    return out


def run_schemas(schemas: list[tuple[str, str]], *, verify: bool = True, workdir: Path | None = None, adopt_from: Path | None = None) -> CorpusRun:
    """new → lint → verify for each (name, schema); never raises for one schema's sake.

    With ``adopt_from`` (the yaml the schemas come from) each op is adopted from its entry instead of
    generated from its func alone (``opkit new --from adopt_from --op NAME.OVERLOAD``)."""
    from opkit.generate import SpecError, make_spec
    from opkit.generate.project import generate_project
    from opkit.lint import Severity, lint

    run = CorpusRun()
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="opkit-corpus-")) if own else workdir
    started = time.perf_counter()
    try:
        for index, (name, schema) in enumerate(schemas):
            outcome, detail = _one(index, name, schema, root, verify, make_spec, SpecError, generate_project, lint, Severity, adopt_from)
            run.counts[outcome] += 1
            if outcome != "ok":
                run.failures[outcome].append(f"{schema}\n    {detail}")
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)
    run.seconds = time.perf_counter() - started
    return run


def _one(index, name, schema, root, verify, make_spec, SpecError, generate_project, lint, Severity, adopt_from=None) -> tuple[str, str]:
    from opkit.adopt import AdoptError, adopt

    try:
        try:
            if adopt_from is not None:
                spec = adopt(str(adopt_from), op=schema.split("(", 1)[0].strip(), style="op-plugin").spec
            else:
                spec = make_spec(name, schema=schema, style="op-plugin")
        except (SpecError, AdoptError) as exc:
            message = str(exc)
            return ("refused" if CORRECTED in message else "refused-other"), message
        target = root / f"op{index}"
        project = generate_project(spec, target, msopgen_mode="builtin").path
        errors = [f for f in lint([str(project)]).findings if f.severity >= Severity.ERROR]
        if errors:
            return "lint", "; ".join(f"{f.code} {f.message}" for f in errors[:3])
        if verify:
            from opkit.verify import verify_project

            report = verify_project(project)
            if not report.ok:
                return "verify", "; ".join(p.message for p in report.problems[:2])
        shutil.rmtree(target, ignore_errors=True)
        return "ok", ""
    except Exception:
        return "crash", traceback.format_exc(limit=-3).strip().replace("\n", "\n    ")


def corrected_schemas_generate(run: CorpusRun) -> tuple[int, int]:
    """(refusals whose corrected schema `opkit new` accepts, documented refusals)."""
    from opkit.generate import SpecError, make_spec

    accepted = 0
    refused = run.failures.get("refused", [])
    for item in refused:
        fixed = item.split(CORRECTED, 1)[1].split(" (opkit new ", 1)[0]
        name = fixed.split("(", 1)[0].split(".", 1)[0]
        command = item.split(CORRECTED, 1)[1]
        style = command.split("--style ", 1)[1].split()[0] if "--style " in command else None
        try:
            make_spec(name, schema=fixed, style=style)
            accepted += 1
        except SpecError:
            pass
    return accepted, len(refused)


def signature_classes(schema: str) -> frozenset[str]:
    """What a schema exercises in new/lint/verify: each argument type (a sized list as a list), and whether it is
    mutated, defaulted or keyword-only; the number of returns and each return type."""
    from opkit.signature import parse_schema

    sig = parse_schema(schema)
    classes = {f"returns {min(len(sig.returns), 3)}"} | {f"-> {r.type}{'!' if r.alias else ''}" for r in sig.returns}
    for a in sig.arguments:
        kind = str(a.type).replace(f"[{a.type.size}]", "[]")
        classes |= {kind} | ({f"{kind}!"} if a.is_mutated else set()) | ({f"{kind}="} if a.default is not None else set())
        classes |= {"*"} if a.kwarg_only else set()
    return frozenset(classes)


def covering_sample(schemas: list[tuple[str, str]], *, times: int = 1) -> list[tuple[str, str]]:
    """The fewest schemas (greedily, ties in file order) `opkit new` accepts that exercise every class of
    `signature_classes` over all accepted schemas ``times`` times (or as often as the accepted schemas do)."""
    from opkit.generate import SpecError, make_spec

    accepted = []
    for name, schema in schemas:
        try:
            make_spec(name, schema=schema, style="op-plugin")
        except SpecError:
            continue
        accepted.append((name, schema, signature_classes(schema)))
    available = collections.Counter(c for *_, classes in accepted for c in classes)
    wanted = {c: min(times, n) for c, n in available.items()}
    sample = []
    while any(wanted.values()):
        best = max(accepted, key=lambda item: sum(1 for c in item[2] if wanted.get(c)))
        accepted.remove(best)
        sample.append(best[:2])
        for c in best[2]:
            wanted[c] = max(0, wanted[c] - 1)
    return sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--aten", action="store_true", help="ATen's functional schemas instead of the corpus")
    parser.add_argument("--verify", dest="verify", action="store_true", default=None)
    parser.add_argument("--no-verify", dest="verify", action="store_false")
    parser.add_argument("--adopt", action="store_true", help="adopt each corpus entry (opkit new --from corpus.yaml --op NAME)")
    parser.add_argument("--show", type=int, default=5, help="failures shown per outcome")
    args = parser.parse_args(argv)
    schemas = aten_schemas() if args.aten else corpus_schemas()
    if args.limit:
        schemas = schemas[: args.limit]
    verify = (not args.aten) if args.verify is None else args.verify
    run = run_schemas(schemas, verify=verify, adopt_from=CORPUS_YAML if args.adopt and not args.aten else None)
    what = "ATen functional schemas" if args.aten else ("corpus custom: entries adopted" if args.adopt else "corpus custom: schemas")
    print(what + f" (verify: {verify}): " + run.summary())
    if run.counts["refused"]:
        accepted, total = corrected_schemas_generate(run)
        print(f"documented refusals: {total}, each with a corrected schema; opkit new accepts {accepted} of those")
    for outcome, items in sorted(run.failures.items()):
        for item in items[: args.show]:
            print(f"[{outcome}] {item}")
    return 1 if run.counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
