#!/usr/bin/env bash
# Graph-entry smoke test on an Ascend machine (Atlas A2/A3, CANN sourced, torch + matching torch_npu):
#   bash benchmarks/npu_smoke.sh [PROJECT_DIR...]
# 1. `opkit doctor` (versions, NPU, SoC, traps);
# 2. a custom_op with device_types="npu" through the REAL npugraph_ex backend:
#    torch.compile(backend="npugraph_ex", fullgraph=True, dynamic=False), called twice, compared with eager;
# 3. `opkit verify` on each PROJECT_DIR given (backend auto = npugraph_ex there);
# 4. the NPU-marked tests, one pytest-xdist worker per visible device.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${ASCEND_HOME_PATH:-}${ASCEND_TOOLKIT_HOME:-}" && -f /usr/local/Ascend/ascend-toolkit/set_env.sh ]]; then
  # shellcheck disable=SC1091
  source /usr/local/Ascend/ascend-toolkit/set_env.sh
fi

echo "== opkit doctor"
opkit doctor || true

echo "== npugraph_ex: custom_op in-place and out-of-place"
python - <<'PY'
import torch
import torch_npu  # noqa: F401  registers torch.npu and the "npugraph_ex" Dynamo backend

from opkit.verify import check_graph_entry


@torch.library.custom_op("opkit_smoke::scaled_add", mutates_args=(), device_types="npu")
def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y  # runs NPU ATen kernels


@scaled_add.register_fake
def _(x, y, alpha):
    return torch.empty_like(x)


@torch.library.custom_op("opkit_smoke::scale_", mutates_args=("x",), device_types="npu")
def scale_(x: torch.Tensor, s: float) -> None:
    x.mul_(s)


@scale_.register_fake
def _(x, s):
    return None


ok = True
for op, args in ((scaled_add, (torch.randn(16, 32), torch.randn(16, 32), 0.5)), (scale_, (torch.randn(16, 32), 2.0))):
    report = check_graph_entry(op, args, backend="npugraph_ex", device="npu")
    print(report, "\n")
    ok &= report.ok
raise SystemExit(0 if ok else 1)
PY

for project in "$@"; do
  echo "== opkit verify $project"
  opkit verify "$project" --backend npugraph_ex
done

echo "== NPU-marked tests, one worker per device"
devices="${ASCEND_RT_VISIBLE_DEVICES:-$(python -c 'import torch, torch_npu; print(",".join(map(str, range(torch.npu.device_count()))))')}"
workers=$(awk -F, '{print NF}' <<<"$devices")
ASCEND_RT_VISIBLE_DEVICES="$devices" python -m pytest tests/verify -m npu -n "$workers" -q -rs || [[ $? -eq 5 ]]  # 5: none collected
