"""The GitHub Actions workflows (.github/workflows): actionlint finds nothing wrong, CI runs
.ci/run on pushes and pull requests, and publishing builds the book through its execution
cache and deploys it to GitHub Pages."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"


def load(name: str) -> dict:
    spec = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    spec["on"] = spec.pop(True, spec.get("on"))           # YAML 1.1 reads the key on as True
    return spec


def steps(spec: dict, job: str) -> list[dict]:
    return spec["jobs"][job]["steps"]


def test_actionlint_finds_nothing_wrong():
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        if os.environ.get("CI"):
            pytest.fail("actionlint is missing (requirements.txt installs it)")
        pytest.skip("actionlint is not installed (pip install -r requirements.txt)")
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert len(files) == 2, files
    proc = subprocess.run([actionlint, "-no-color", *map(str, files)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ci_runs_the_repositorys_check_on_pushes_and_pull_requests():
    spec = load("ci.yml")
    assert {"push", "pull_request"} <= set(spec["on"])
    runs = [s.get("run", "") for s in steps(spec, "test")]
    assert "bash .ci/run" in runs
    assert spec["jobs"]["test"]["container"].startswith("python:3.11")   # Debian, as root


def test_publishing_keeps_the_execution_cache_and_deploys_to_pages():
    spec = load("publish.yml")
    assert spec["on"]["push"]["branches"] == ["main"]
    build = steps(spec, "build")
    uses = [s.get("uses", "").split("@")[0] for s in build]
    order = ["actions/cache/restore", "actions/cache/save", "actions/upload-pages-artifact"]
    assert all(u in uses for u in order) and [uses.index(u) for u in order] == sorted(
        uses.index(u) for u in order)
    commands = [s.get("run", "") for s in build]
    build_at = next(i for i, c in enumerate(commands) if c.startswith("jupyter-book build ."))
    assert uses.index("actions/cache/restore") < build_at < uses.index("actions/cache/save")
    cached = {s["with"]["path"] for s in build if s.get("uses", "").startswith("actions/cache/")}
    assert cached == {"_build/.jupyter_cache"}
    restore = next(s for s in build if s.get("uses", "").startswith("actions/cache/restore"))
    assert restore["with"]["restore-keys"]      # an older cache is restored when sources change
    assert next(s for s in build if "upload-pages-artifact" in s.get("uses", ""))[
        "with"]["path"] == "_build/html"
    deploy = spec["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    assert spec["permissions"]["pages"] == "write" and spec["permissions"]["id-token"] == "write"
