"""The Space: README.md's front matter by the Hub's rules (docs/hub/spaces-config-reference.md), the
requirements file the Space installs and pyproject.toml's run-time dependencies, the same packages."""

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import yaml
from huggingface_hub import SpaceCardData
from packaging.requirements import Requirement
from packaging.version import Version

from core.data import PROJECT_ROOT
from tools.release.cards import HUB_DATASETS

# the hardware names the Hub accepts for suggested_hardware (spaces-config-reference.md)
HARDWARE = {
    "cpu-basic",
    "cpu-upgrade",
    "t4-small",
    "t4-medium",
    "l4x1",
    "l4x4",
    "l40sx1",
    "l40sx4",
    "l40sx8",
    "a10g-small",
    "a10g-large",
    "a10g-largex2",
    "a10g-largex4",
    "a100-large",
    "h100",
    "h100x8",
}
# what the Space must never install: the tools' and the tests' packages
DEV_ONLY = {"pytest", "hypothesis", "playwright", "ray", "gensim", "pyyaml"}


def front_matter() -> dict:
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "README.md must open with the Space's YAML front matter"
    return yaml.safe_load(match.group(1))


def requirements(path: Path) -> tuple[list[str], dict[str, Requirement]]:
    """(option lines, {name: requirement}) of a requirements file, comments dropped."""
    options, reqs = [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-"):
            options.append(line)
        elif line:
            req = Requirement(line)
            reqs[req.name.lower().replace("_", "-")] = req
    return options, reqs


def test_front_matter_follows_the_space_rules():
    meta = front_matter()
    card = SpaceCardData(**meta)  # the Hub library's own reading of it
    assert card.sdk == "gradio" and card.app_file == "app.py" and Path(PROJECT_ROOT / card.app_file).is_file()
    assert 0 < len(meta["short_description"]) <= 60, meta["short_description"]
    assert meta["suggested_hardware"] == "cpu-basic" and meta["suggested_hardware"] in HARDWARE
    # a license chosen on purpose (docs/space.md, License): MIT, a Hub license id
    assert card.license == "mit"
    # every dataset id names a Hub dataset (the ones the cards use), none a plain corpus name
    assert set(card.datasets) <= set(HUB_DATASETS.values()) - {None}
    assert all(re.fullmatch(r"[\w.-]+/[\w.-]+", d) for d in card.datasets)


def test_sdk_version_is_the_gradio_the_requirements_resolve_to():
    sdk_version = front_matter()["sdk_version"]
    _, reqs = requirements(PROJECT_ROOT / "requirements.txt")
    assert reqs["gradio"].specifier.contains(sdk_version), (sdk_version, str(reqs["gradio"]))
    assert Version(sdk_version) == Version(version("gradio")), "sdk_version must be the gradio tested here"


def test_the_space_installs_the_cpu_torch_and_run_time_packages_only():
    options, reqs = requirements(PROJECT_ROOT / "requirements.txt")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in options
    assert str(reqs["torch"].specifier) == "==2.13.0+cpu"
    assert not DEV_ONLY & set(reqs), DEV_ONLY & set(reqs)


def test_the_project_s_dependencies_are_the_space_s_run_time_packages():
    """pyproject.toml's dependencies (what `make demo` and `make install` install) are requirements.txt's lines
    but torch's: no remote index (pip would retry an unreachable one five times per package), torch pinned
    for the local CPU wheel; the tools' and tests' packages are extras."""
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    local = {req.name.lower().replace("_", "-"): req for req in map(Requirement, project["dependencies"])}
    assert str(local["torch"].specifier) == "==2.13.0" and not local["torch"].url
    _, space = requirements(PROJECT_ROOT / "requirements.txt")
    assert {name: str(req) for name, req in space.items() if name != "torch"} == {
        name: str(req) for name, req in local.items() if name != "torch"
    }
    assert not DEV_ONLY & set(local), DEV_ONLY & set(local)
    extras = {Requirement(line).name for lines in project["optional-dependencies"].values() for line in lines}
    assert DEV_ONLY <= extras, DEV_ONLY - extras
    assert "-r requirements" not in (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")


def test_space_check_names_cuda_packages_and_keeps_the_index_line_or_replaces_it_by_the_wheel(tmp_path, monkeypatch):
    """tools.release.space_check (make space-check): what it counts as CUDA, and the requirements file it installs."""
    from tools.release import space_check

    assert space_check.cuda_packages(["torch", "nvidia-cudnn-cu12", "triton", "numpy", "cuda-bindings"]) == [
        "cuda-bindings",
        "nvidia-cudnn-cu12",
        "triton",
    ]
    (tmp_path / "requirements.txt").write_text((PROJECT_ROOT / "requirements.txt").read_text(encoding="utf-8"))
    monkeypatch.setattr(space_check, "reachable", lambda host, **kw: True)
    assert space_check.requirements_for_here(tmp_path, tmp_path / "w", None)[0] == tmp_path / "requirements.txt"
    monkeypatch.setattr(space_check, "reachable", lambda host, **kw: False)
    wheel = tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(b"not really a wheel")
    path, source = space_check.requirements_for_here(tmp_path, tmp_path / "w", wheel)
    _, original = requirements(tmp_path / "requirements.txt")
    options, replaced = requirements(path)
    assert options == [f"--find-links {tmp_path / 'w'}"] and (tmp_path / "w" / wheel.name).is_file()
    assert {k: str(v) for k, v in replaced.items()} == {k: str(v) for k, v in original.items()}
    assert "unreachable" in source
