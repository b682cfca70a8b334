"""The environment doctor: the checks the field guide does by hand on a fresh pod, run in one go through
run_remote, each answered pass / warn / fail with the fix."""

from podtui.core.doctor.checks import Check, DoctorReport, Status, diagnose
from podtui.core.doctor.probe import PodFacts, PodNotReady, doctor_pod, parse_probe, probe_script, run_doctor

__all__ = ["Check", "DoctorReport", "PodFacts", "PodNotReady", "Status", "diagnose", "doctor_pod", "parse_probe",
           "probe_script", "run_doctor"]
