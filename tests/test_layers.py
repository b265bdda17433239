"""The library's layers (emu/__init__.py): the import-linter contracts of pyproject.toml hold,
no module imports another in a circle, no emu module hides an import of emu inside a
function (the command line's, for its start-up time, excepted), and the surface a notebook
types loads what it names."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import emu

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "emu"


LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())", "--no-cache"]


def lint_imports(*options, cwd=ROOT, env=None):
    """import-linter's command (lint-imports) on the package, as CI runs it."""
    return subprocess.run(LINT + list(options), cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def test_the_contracts_are_kept():
    done = lint_imports()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(tmp_path):
    """The check can fail: a copy of the library whose hardware model imports the machine
    is refused, naming the import."""
    copy = tmp_path / "lib"
    copy.mkdir()
    subprocess.run(["cp", "-r", str(PACKAGE), str(copy)], check=True)
    cache = copy / "emu" / "hw" / "cache.py"
    cache.write_text(cache.read_text() + "\nfrom ..run import machine  # noqa\n")
    config = tmp_path / "pyproject.toml"
    config.write_text((ROOT / "pyproject.toml").read_text())
    done = lint_imports("--config", str(config), cwd=copy, env={"PYTHONPATH": str(copy)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "emu.hw.cache -> emu.run.machine" in done.stdout


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circles():
    assert cycles(grimp.build_graph("emu")) == []


def test_cycles_finds_a_circle():
    """The circle finder itself, on a made-up graph of three modules importing in a ring."""
    graph = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")):
        graph.add_import(importer=a, imported=b)
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]


def hidden_imports(path):
    """emu imports inside functions: (line, text)."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (
                        inner.level > 0 or (inner.module or "").startswith("emu")):
                    found.append((inner.lineno, ast.unparse(inner)))
    return found


@pytest.mark.parametrize("path", sorted(p.relative_to(PACKAGE).as_posix()
                                        for p in PACKAGE.rglob("*.py")
                                        if p.name != "__main__.py"))
def test_no_import_is_hidden_in_a_function(path):
    assert hidden_imports(PACKAGE / path) == []


def test_the_surface_loads_what_it_names():
    for name, (module, attribute) in emu.SURFACE.items():
        value = getattr(emu, name)
        assert value is not None, name
    assert emu.Machine.__module__ == "emu.run.machine"
    assert emu.workloads.__name__ == "emu.kernel.workloads"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        emu.nothing


def test_importing_emu_loads_no_emulator():
    """``import emu`` is cheap: the surface loads a module when a name is first used."""
    code = "import sys, emu; print('unicorn' in sys.modules, 'emu.run.machine' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "False"]


def notebook_imports():
    """Every ``import emu`` / ``from emu... import`` line of the book's notebooks."""
    lines = set()
    for path in sorted([*ROOT.glob("notebooks/**/*.ipynb"), *ROOT.glob("book/*.ipynb")]):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                lines |= {line.strip() for line in "".join(cell["source"]).splitlines()
                          if line.startswith(("import emu", "from emu"))}
    return sorted(lines)


def test_every_import_of_the_notebooks_resolves():
    """The notebooks reach the library through its surface and full module paths only: each
    of their import lines runs (a stale path would fail a whole page of the book)."""
    lines = notebook_imports()
    assert len(lines) > 20 and "import emu" in lines
    done = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
