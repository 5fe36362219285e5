"""The machine a benchmark ran on: CPU, cores, memory, torch threads, load, library versions, commit."""

import importlib.metadata
import os
import platform

import torch

from tools.git import git_commit


def machine_info() -> dict:
    cpu = ""
    try:
        cpu = next(
            (
                line.split(":", 1)[1].strip()
                for line in open("/proc/cpuinfo", encoding="utf-8")
                if line.startswith("model name")
            ),
            "",
        )
    except OSError:
        pass
    versions = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("numpy", "gradio", "gradio_client", "spacy", "jieba", "safetensors"):
        try:
            versions[name] = importlib.metadata.version(name)  # without importing (gradio alone takes seconds)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    try:
        memory_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        memory_gib = None
    return {
        "cpu": cpu or platform.processor() or "unknown",
        "logical_cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_gib": memory_gib,
        "platform": platform.platform(),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "mkl": torch.backends.mkl.is_available(),
        "versions": versions,
        "commit": git_commit(),
        "load_average": list(os.getloadavg()),
    }
