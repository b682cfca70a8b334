"""podtui's own GraphQL documents, and the checks every value passes before it is put into one.

The SDK builds its queries by string interpolation, so an id carrying a quote or a brace would
rewrite the query. Nothing reaches a query string here without passing `pod_id()` first.
"""

from __future__ import annotations

import re

from podtui.core.api.errors import InvalidInput

# The SDK's canned pod query lacks live runtime, podHostId and the account's money fields (issue 2).
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
