"""The environment doctor: the checks a person would otherwise do by hand on a fresh pod (which Python has torch,
whether CUDA works, the GPU, transformers against torch, the volume's free space, runpodctl, the Hugging Face
login), run in one go through run_remote, each answered pass / warn / fail with the fix.

`probe` writes the script and reads its output, `checks` judges what it found, `exam` runs both on a pod,
`wheels` knows which torch to install for a CUDA line."""

from podtui.core.doctor.checks import Check, DoctorReport, Status, diagnose
from podtui.core.doctor.exam import PodNotReady, doctor_pod, run_doctor
from podtui.core.doctor.probe import PodReadings, parse_probe, probe_script

__all__ = [
    "Check",
    "DoctorReport",
    "PodNotReady",
    "PodReadings",
    "Status",
    "diagnose",
    "doctor_pod",
    "parse_probe",
    "probe_script",
    "run_doctor",
]
