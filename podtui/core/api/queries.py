"""podtui's own GraphQL documents, and the checks every value passes before it is put into one.

The SDK builds its queries by string interpolation, so an id carrying a quote or a brace would
rewrite the query. Nothing reaches a query string here without passing `pod_id()` first.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from podtui.core.api.errors import InvalidInput

if TYPE_CHECKING:
    from podtui.core.pod_spec import PodSpec

# The SDK's canned pod query lacks live runtime, podHostId and the account's money fields, which the pod list
# shows (docs/runpod-facts.md#graphql).
PODS_QUERY = """
query podtuiPods {
  myself {
    id
    clientBalance
    currentSpendPerHr
    spendLimit
    pubKey
    pods {
      id
      name
      desiredStatus
      lastStatusChange
      imageName
      gpuCount
      costPerHr
      vcpuCount
      memoryInGb
      containerDiskInGb
      volumeInGb
      volumeMountPath
      ports
      env
      machineId
      uptimeSeconds
      networkVolume { id name }
      machine { gpuDisplayName location podHostId }
      runtime {
        uptimeInSeconds
        ports { ip isIpPublic privatePort publicPort type }
        gpus { id gpuUtilPercent memoryUtilPercent }
        container { cpuPercent memoryPercent }
      }
    }
  }
}
"""

ACCOUNT_KEYS_QUERY = "query podtuiAccountKeys { myself { id pubKey } }"

_POD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def pod_id(value: object) -> str:
    """A pod id safe to interpolate: letters, digits, '-' and '_' only."""
    if not isinstance(value, str) or not _POD_ID.fullmatch(value):
        shown = repr(value)[:60]
        raise InvalidInput(f"refused to send pod id {shown}: ids are letters, digits, '-' and '_' only")
    return value


def gpu_count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 16:
        raise InvalidInput(f"refused to send gpu count {value!r}: must be a whole number from 0 to 16")
    return value


def gpu_types_query() -> str:
    """Every GPU type with its list prices and, per cloud, the stock for 1, 2, 4 and 8 GPUs on one machine.

    lowestPrice takes GpuLowestPriceInput {gpuCount, secureCloud, ...} (runpodctl's GetCloud, the runpod SDK's
    get_gpu); one alias per (cloud, count) asks all of them in one round trip. The counts are podtui's own
    constants, so nothing from outside reaches this document.
    """
    from podtui.core.gpu.catalogue import STOCK_COUNTS, Cloud

    stock = "\n".join(
        f"    {cloud.label}{n}: lowestPrice(input: {{gpuCount: {gpu_count(n)}, secureCloud: "
        f"{'true' if cloud is Cloud.SECURE else 'false'}}}) {{ minimumBidPrice uninterruptablePrice stockStatus }}"
        for cloud in Cloud
        for n in STOCK_COUNTS
    )
    return (
        "query podtuiGpuTypes {\n  gpuTypes {\n"
        "    id displayName memoryInGb maxGpuCount secureCloud communityCloud\n"
        "    securePrice communityPrice secureSpotPrice communitySpotPrice\n"
        f"{stock}\n  }}\n}}\n"
    )


def create_pod_mutation(spec: PodSpec) -> str:
    """podFindAndDeployOnDemand with every string a JSON literal (a valid GraphQL string, every quote and
    backslash escaped): the SDK's generate_pod_deployment_mutation interpolates name, image and env raw."""
    spec.validate()
    s = json.dumps
    env = ", ".join(f"{{key: {s(k)}, value: {s(v)}}}" for k, v in spec.env)
    fields = [
        f"cloudType: {spec.cloud.value}",  # an enum: SECURE or COMMUNITY, never a string
        f"gpuCount: {gpu_count(spec.gpu_count)}",
        f"volumeInGb: {int(spec.volume_gb)}",
        f"containerDiskInGb: {int(spec.container_gb)}",
        f"gpuTypeId: {s(spec.gpu_type_id)}",
        f"name: {s(spec.name)}",
        f"imageName: {s(spec.image)}",
        f"ports: {s(spec.ports)}",
        f"volumeMountPath: {s(spec.volume_mount_path)}",
        f"env: [{env}]",
        f"supportPublicIp: {'true' if spec.support_public_ip else 'false'}",
        f"startSsh: {'true' if spec.start_ssh else 'false'}",
    ]
    return (
        "mutation podtuiCreatePod {\n  podFindAndDeployOnDemand(input: {\n    "
        + ",\n    ".join(fields)
        + "\n  }) { id name desiredStatus costPerHr imageName machineId machine { podHostId } }\n}\n"
    )
