"""The slice of RunPod's GraphQL schema podtui uses, served by graphql-core with resolvers over a World."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError, GraphQLSchema, build_schema

from podtui.core.demo_sandbox import SANDBOX_ENV
from podtui.sim.world import SimError, SimPod, World

SDL = """
scalar Void

enum PodStatus { CREATED RUNNING RESTARTING EXITED PAUSED DEAD TERMINATED }

type Query {
  myself: User
  pod(input: PodFilter!): Pod
  gpuTypes(input: GpuTypeFilter): [GpuType]
}

type Mutation {
  podStop(input: PodStopInput!): Pod
  podResume(input: PodResumeInput!): Pod
  podTerminate(input: PodTerminateInput!): Void
  updateUserSettings(input: UpdateUserSettingsInput!): User
  podFindAndDeployOnDemand(input: PodFindAndDeployOnDemandInput): Pod
}

input PodFilter { podId: String! }
input PodStopInput { podId: String! incrementVersion: Boolean }
input PodResumeInput { podId: String! gpuCount: Int! }
input PodTerminateInput { podId: String! }
input UpdateUserSettingsInput { pubKey: String }

# GPU types and on-demand deployment, with the names RunPod's schema uses (the runpod SDK's get_gpu and
# generate_pod_deployment_mutation, runpodctl's CreatePodInput and GetCloudInput).
input GpuTypeFilter { id: String }
input GpuLowestPriceInput {
  gpuCount: Int! minMemoryInGb: Int minVcpuCount: Int secureCloud: Boolean supportPublicIp: Boolean
  totalDisk: Int minDownload: Int minUpload: Int dataCenterId: String countryCode: String
}
type LowestPrice {
  gpuName: String gpuTypeId: String minimumBidPrice: Float uninterruptablePrice: Float
  minMemory: Int minVcpu: Int stockStatus: String
}
type GpuType {
  id: String! displayName: String memoryInGb: Int maxGpuCount: Int manufacturer: String cudaCores: Int
  secureCloud: Boolean communityCloud: Boolean securePrice: Float communityPrice: Float
  secureSpotPrice: Float communitySpotPrice: Float oneMonthPrice: Float
  lowestPrice(input: GpuLowestPriceInput): LowestPrice
}
enum CloudTypeEnum { ALL SECURE COMMUNITY }
input EnvironmentVariableInput { key: String! value: String! }
input PodFindAndDeployOnDemandInput {
  cloudType: CloudTypeEnum gpuCount: Int gpuTypeId: String name: String imageName: String
  containerDiskInGb: Int volumeInGb: Int volumeMountPath: String ports: String env: [EnvironmentVariableInput]
  supportPublicIp: Boolean startSsh: Boolean startJupyter: Boolean dockerArgs: String templateId: String
  minVcpuCount: Int minMemoryInGb: Int dataCenterId: String countryCode: String networkVolumeId: String
  allowedCudaVersions: [String] minDownload: Int minUpload: Int deployCost: Float
}

type User {
  id: String
  email: String
  clientBalance: Float
  currentSpendPerHr: Float
  spendLimit: Float
  pubKey: String
  pods: [Pod]
  networkVolumes: [NetworkVolume]
}

type NetworkVolume { id: String name: String size: Int dataCenterId: String }

type Pod {
  id: String!
  name: String
  desiredStatus: PodStatus
  lastStatusChange: String
  imageName: String
  gpuCount: Int
  costPerHr: Float
  vcpuCount: Float
  memoryInGb: Float
  containerDiskInGb: Int
  volumeInGb: Float
  volumeMountPath: String
  ports: String
  port: Int
  env: [String]
  machineId: String
  podType: String
  dockerArgs: String
  dockerId: String
  uptimeSeconds: Int
  networkVolume: NetworkVolume
  machine: Machine
  runtime: PodRuntime
}

type Machine { podHostId: String gpuDisplayName: String location: String }

type PodRuntime {
  uptimeInSeconds: Int
  ports: [Port]
  gpus: [GpuTelemetry]
  container: ContainerTelemetry
}

type Port { ip: String isIpPublic: Boolean privatePort: Int publicPort: Int type: String }
type GpuTelemetry { id: String gpuUtilPercent: Float memoryUtilPercent: Float }
type ContainerTelemetry { cpuPercent: Float memoryPercent: Float }
"""


def pod_record(world: World, pod: SimPod) -> dict[str, Any]:
    runtime = world.runtime(pod)
    return {
        "id": pod.id,
        "name": pod.name,
        "desiredStatus": pod.status,
        "lastStatusChange": pod.last_status_change,
        "imageName": pod.image,
        "gpuCount": pod.gpu_count,
        "costPerHr": pod.cost_per_hr,
        "vcpuCount": pod.vcpu_count,
        "memoryInGb": pod.memory_gb,
        "containerDiskInGb": pod.container_disk_gb,
        "volumeInGb": pod.volume_gb,
        "volumeMountPath": pod.volume_mount_path,
        "ports": pod.ports,
        "port": None,
        "env": [f"{k}={v}" for k, v in pod.env.items()]
        + ([f"{SANDBOX_ENV}={world.unisolated_root}/{pod.id}"] if world.unisolated_root else []),
        "machineId": pod.machine_id,
        "podType": "RESERVED",
        "dockerArgs": pod.docker_args,
        "dockerId": None,
        "uptimeSeconds": int(runtime["uptimeInSeconds"]) if runtime and pod.status == "RUNNING" else 0,  # type: ignore[call-overload]
        "networkVolume": _volume(world, pod) if pod.network_volume else None,
        "machine": {"podHostId": pod.pod_host_id, "gpuDisplayName": pod.gpu_type, "location": pod.location},
        "runtime": runtime,
    }


def _volume(world: World, pod: SimPod) -> dict[str, Any]:
    known = world.volumes.get(pod.network_volume or "")
    if known is not None:
        return {"id": known.id, "name": known.name, "size": known.size_gb, "dataCenterId": known.data_centre}
    return {"id": pod.network_volume, "name": pod.network_volume, "size": pod.volume_gb, "dataCenterId": pod.location}


class _Root:
    """Resolvers: graphql-core's default resolver reads these attributes and calls them with the args."""

    def __init__(self, world: World) -> None:
        self.world = world

    def myself(self, _info: Any) -> dict[str, Any]:
        w = self.world
        with w.lock:
            pods = [pod_record(w, p) for p in w.visible_pods()]
            return {
                "id": w.user_id,
                "email": "demo@podtui.invalid",
                "clientBalance": round(w.balance, 6),
                "currentSpendPerHr": round(w.spend_per_hr(), 6),
                "spendLimit": w.spend_limit,
                "pubKey": w.pub_key,
                "pods": pods,
                "networkVolumes": [
                    {"id": v.id, "name": v.name, "size": v.size_gb, "dataCenterId": v.data_centre}
                    for v in w.volumes.values()
                ],
            }

    def pod(self, _info: Any, input: dict[str, Any]) -> dict[str, Any] | None:
        with self.world.lock:
            p = self.world.pods.get(input["podId"])
            return pod_record(self.world, p) if p else None

    def gpuTypes(self, _info: Any, input: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        with self.world.lock:
            types = list(self.world.gpu_types.values())
        wanted = (input or {}).get("id")
        return [g.record() for g in types if wanted is None or g.id == wanted]

    def _act(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except SimError as e:
            raise GraphQLError(str(e)) from None

    def podStop(self, _info: Any, input: dict[str, Any]) -> dict[str, Any]:
        pod = self._act(self.world.stop, input["podId"])
        return pod_record(self.world, pod)

    def podResume(self, _info: Any, input: dict[str, Any]) -> dict[str, Any]:
        pod = self._act(self.world.resume, input["podId"], input["gpuCount"])
        return pod_record(self.world, pod)

    def podTerminate(self, _info: Any, input: dict[str, Any]) -> None:
        self._act(self.world.terminate, input["podId"])
        return None

    def podFindAndDeployOnDemand(self, _info: Any, input: dict[str, Any] | None = None) -> dict[str, Any]:
        pod = self._act(self.world.create, input or {})
        return pod_record(self.world, pod)

    def updateUserSettings(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        if input.get("pubKey") is not None:
            self.world.set_pub_key(input["pubKey"])
        return self.myself(info)


def make_schema() -> GraphQLSchema:
    return build_schema(SDL)


def root_for(world: World) -> _Root:
    return _Root(world)
