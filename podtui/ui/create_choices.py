"""The create form's GPU choices: which types its lists offer (all, or on a network volume those free in its data
centre: docs/launch.md#network-volumes), and the words for where a type is free, what its stock means, and why
none can be tried. Plain values, no widgets: the form passes what its fields hold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from podtui.core.gpu import Cloud, GpuCatalogue, GpuType, Stock
from podtui.core.pod_spec import Candidates, Choice, PodSpec, SpecCost, stocked_words
from podtui.core.visible import visible
from podtui.core.volume import NetworkVolume

ANY_CLOUD = "ANY"
CLOUDS = [
    ("community cloud", Cloud.COMMUNITY.value),
    ("secure cloud", Cloud.SECURE.value),
    ("community, then secure", ANY_CLOUD),
]


def clouds_of(value: object) -> list[Cloud]:
    """The clouds the cloud list's value stands for, in the order tried."""
    return [Cloud.COMMUNITY, Cloud.SECURE] if value == ANY_CLOUD else [Cloud(str(value))]


def default_name(gpu: GpuType | None) -> str:
    return "podtui-" + (gpu.display_name.lower().replace(" ", "-") if gpu else "pod")


def gpu_label(g: GpuType, cloud: Cloud, count: int = 1) -> str:
    """The type, its memory, and its price and stock on the cloud chosen (short: it shares a row at 80 columns)."""
    price = g.price(cloud)
    if price is None:
        return f"{g.display_name} · {g.memory_gb} GB · not on {cloud.label} cloud"
    return f"{g.display_name} · {g.memory_gb} GB · ${price:.2f}/hr · {g.stock_for(cloud, count).label}"


def volume_label(v: NetworkVolume) -> str:
    return f"{visible(v.name)} · {v.size_gb} GB · {visible(v.data_centre)} · ${v.cost_per_month:.2f}/month"


def stock_words(first: Choice, gpu: GpuType) -> str:
    """What RunPod's stock says of the first candidate, when it is not plainly free."""
    if first.data_centre_id:
        level = gpu.stock_in(first.cloud, first.gpu_count, first.data_centre_id)
        where = f" in {first.data_centre_id}"
    else:
        level, where = gpu.stock_for(first.cloud, first.gpu_count), ""
    what = f"{first.gpu_count} x {gpu.display_name} on {first.cloud.label} cloud{where}"
    if level is Stock.NONE:
        return f"RunPod shows no stock of {what} right now: creating will probably be refused"
    if level is Stock.UNKNOWN:
        return f"RunPod did not say whether {what} is free"
    return ""


def cost_words(cost: SpecCost | None) -> str:
    if cost is None:
        return "Cost: fill in the GPU, count and disks to see it"
    return (
        f"Cost: ${cost.per_hr:.3f}/hr · ${cost.per_day:.2f}/day while running "
        f"(GPU ${cost.gpu_per_hr:.3f}/hr + disks ${cost.storage_per_hr:.3f}/hr); {cost.kept_words()}"
    )


def short_words(choice: Choice, gpu: GpuType) -> str:
    """A candidate in few words, for the review line at 80 columns."""
    what = gpu.display_name if choice.gpu_count == 1 else f"{choice.gpu_count} x {gpu.display_name}"
    where = f", {choice.data_centre_id}" if choice.data_centre_id else ""
    return f"{what} ({choice.cloud.label}{where})"


def review_lines(
    catalogue: GpuCatalogue | None, planned: Candidates | None, spec: PodSpec | None, unlinked: Sequence[str]
) -> list[str]:
    """The candidates in order, and the ones left out, when there is more to say than the GPU line; a spec sent
    without its template, and a CUDA constraint."""
    lines = []
    if planned is not None and planned.choices and (len(planned.choices) > 1 or planned.skipped):
        assert catalogue is not None  # a candidate comes from the catalogue
        types = catalogue.types
        tries = " → ".join(short_words(c, next(g for g in types if g.id == c.gpu_type_id)) for c in planned.choices)
        skipped = f"; skipped: {'; '.join(planned.skipped)}" if planned.skipped else ""
        lines.append(f"Tries in order: {tries}{skipped}")
    if spec is not None and unlinked:
        also = [w for w, has in (("start command", spec.args), ("registry login", spec.registry)) if has]
        lines.append(
            f"Not linked to the template (you removed {', '.join(unlinked)}, which RunPod would put back): "
            "the pod gets exactly these fields" + (f" and the template's {' and '.join(also)}" if also else "")
        )
    if spec is not None and spec.cuda_versions:
        lines.append(f"Needs CUDA {' or '.join(spec.cuda_versions)} (the template's): fewer machines qualify")
    return lines


@dataclass(frozen=True)
class GpuChoices:
    """What the GPU lists offer for the form's catalogue, network volume, clouds and count."""

    catalogue: GpuCatalogue | None
    volume: NetworkVolume | None
    clouds: list[Cloud]
    count: int

    def listed(self) -> tuple[GpuType, ...]:
        """The types the GPU lists offer: all, or on a network volume those free in its data centre."""
        if self.catalogue is None:
            return ()
        volume = self.volume
        if volume is None:
            return self.catalogue.types
        return tuple(
            g
            for g in self.catalogue.types
            if any(g.stock_in(c, self.count, volume.data_centre) is not Stock.NONE for c in self.clouds)
        )

    def options(self, keep: Sequence[str | None], auto: bool) -> tuple[list[tuple[str, str]], set[str]]:
        """The lists' options and their ids. On a volume a type kept (`keep`: chosen or prefilled in each list)
        that is not free there stays, marked, rather than being swapped for another unseen; the form's own pick
        (`auto`, the first) is not kept."""
        types = self.listed()
        listed = {g.id for g in types}
        volume = self.volume
        extra = [
            g
            for g in (self.catalogue.types if self.catalogue is not None and volume is not None else ())
            if g.id in (keep[1:] if auto else keep) and g.id not in listed
        ]
        options = [(gpu_label(g, self.clouds[0], self.count), g.id) for g in types]
        if volume is not None:
            options += [
                (f"{g.display_name} · {g.memory_gb} GB · none free in {volume.data_centre} now", g.id) for g in extra
            ]
        return options, listed | {g.id for g in extra}

    def cheapest(self) -> str | None:
        """The form's own pick: the cheapest type listed on the first cloud."""
        types = self.listed()
        cloud = self.clouds[0]
        return min(types, key=lambda g: (g.price(cloud) or 1e9, g.display_name)).id if types else None

    def none_listed_words(self) -> str:
        on = "either cloud" if len(self.clouds) > 1 else f"{self.clouds[0].label} cloud"
        if self.volume is None:
            return f"RunPod lists no GPU type on {on}"
        return f"no type free in {self.volume.data_centre} on {on}"

    def where_words(self, gpu: GpuType | None) -> str:
        """Where the chosen type is free now, per cloud; on a network volume, that the list is filtered."""
        volume = self.volume
        if gpu is None or self.catalogue is None:
            return (
                f"no GPU type listed: {stocked_words(self.catalogue, volume.data_centre, self.count)}"
                if volume is not None and self.catalogue is not None and not self.listed()
                else ""
            )
        n = self.count
        if volume is not None:
            levels = ", ".join(f"{c.label} {gpu.stock_in(c, n, volume.data_centre).label}" for c in self.clouds)
            free = gpu.id in {g.id for g in self.listed()}
            return f"only the types free in {volume.data_centre}, where {visible(volume.name)} is, are listed; " + (
                f"{gpu.display_name} there: {levels}" if free else f"{gpu.display_name} is not free there ({levels})"
            )
        clouds = " · ".join(
            f"{c.label}: {gpu.where_words(c, n, 3)}"
            for c in (Cloud.COMMUNITY, Cloud.SECURE)
            if gpu.price(c) is not None
        )
        return f"{gpu.display_name} free in  {clouds}"

    def not_placeable(self, gpu: GpuType, where: Sequence[str]) -> str:
        """The foot's line when no GPU choice can be tried: in view whatever the form's scroll."""
        volume = self.volume
        if volume is not None and gpu.id not in {g.id for g in self.listed()}:
            clouds, n, dc = self.clouds, self.count, volume.data_centre
            other = [c for c in Cloud if c not in clouds and gpu.stock_in(c, n, dc) not in (Stock.NONE, Stock.UNKNOWN)]
            on = "either cloud" if len(clouds) > 1 else f"{clouds[0].label} cloud"
            what = (
                f"it is on {other[0].label} cloud (change the cloud), or pick a type free there"
                if other
                else "pick a type free there, or try later"
            )
            return f"{gpu.display_name} is not free on {on} in {dc}, where {volume.name} is, now: {what}"
        return f"None of the GPU choices is free in {', '.join(where)} now: see the GPU line"
