"""What runs inside a student's sandbox: the student's notebook, cell by cell, and the export
of their answers as plain data (emu.course.exchange).

    python -m emu.course.sandboxed JOB.json FD

JOB holds the cells to run (the released notebook's, each answer cell holding the student's
code), the variables to export after each answer cell and the time limit per cell. A cell
that runs past its limit or kills its kernel is recorded; the kernel is then killed (not
interrupted: a cell may ignore SIGINT), a new one runs the cells before again (not those that
failed so) and execution goes on, at most ``restarts`` times. The result, written to the file
descriptor FD as one line of JSON after each answer cell, holds each cell's status, the
answer cells' outputs (text only, each cut to ``max_output`` characters, 50 at most) and the
exported answers.

Everything here runs as the student, beside the student's code, so nothing it writes is
trusted: the grader reads the result as data, and the checks run outside (emu.course.checking).
"""
from __future__ import annotations

import json
import os
import re
import sys

MARK = "\x00emu-export\x00"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def export_code(names):
    """A cell that prints the answers ``names`` as plain data after MARK."""
    return (f"print({MARK!r} + __import__('emu.course.exchange', fromlist=['dumps']).dumps("
            f"{{_n: globals()[_n] for _n in {sorted(names)!r} if _n in globals()}}))")


def cut(text, limit):
    text = ANSI.sub("", text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut by the grader]"


def plain_outputs(outputs, limit):
    """A cell's outputs as text only, each cut to ``limit`` characters."""
    out = []
    for output in outputs[:50]:
        kind = output.get("output_type")
        if kind == "stream":
            text = "".join(line for line in str(output.get("text", "")).splitlines(True)
                           if not line.startswith(MARK))
            if text:
                out.append({"kind": "stream", "text": cut(text, limit)})
        elif kind in ("execute_result", "display_data"):
            text = output.get("data", {}).get("text/plain")
            if text is not None:
                out.append({"kind": "result", "text": cut(str(text), limit)})
        elif kind == "error":
            trace = "\n".join(str(t) for t in output.get("traceback", []))
            text = trace or f"{output.get('ename')}: {output.get('evalue')}"
            out.append({"kind": "error", "text": cut(text, limit)})
    return out


def exported(outputs):
    """The JSON text an export cell printed, or None."""
    for output in outputs:
        text = str(output.get("text", "")) if output.get("output_type") == "stream" else ""
        for line in text.splitlines():
            if line.startswith(MARK):
                return line[len(MARK):]
    return None


def _client(nb, timeout):
    from nbclient import NotebookClient
    return NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                          interrupt_on_timeout=False, shutdown_kernel="immediate",
                          startup_timeout=120, record_timing=False)


def _aside(client, nb, source, index):
    """Run code in the kernel without touching the notebook's cell ``index`` (nbclient puts
    the cell it ran in its place); returns its outputs."""
    from nbformat.v4 import new_code_cell
    kept = nb.cells[index]
    try:
        return client.execute_cell(new_code_cell(source), index).outputs
    finally:
        nb.cells[index] = kept


def run(job, save=lambda result: None):
    """Execute the job's cells; returns the result (see the module's docstring), which
    ``save`` also gets after each answer cell (so a run killed at its wall-clock limit
    still leaves what it exported)."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat.v4 import new_code_cell, new_notebook
    cells = job["cells"]
    limit, restarts = int(job["max_output"]), int(job["restarts"])
    nb = new_notebook(cells=[new_code_cell(c["source"]) for c in cells])
    status = ["not run"] * len(cells)
    exports = {}
    failed = set()             # cells that timed out or killed their kernel: never run again
    lives, i = 0, 0
    while i < len(cells) and lives <= restarts:
        client, at = _client(nb, job["timeout"]), None
        try:
            with client.setup_kernel():
                for at in range(i):          # a new kernel: the cells before, again
                    if at not in failed:
                        _aside(client, nb, cells[at]["source"], at)
                while i < len(cells):
                    at = i
                    cell = client.execute_cell(nb.cells[i], i)
                    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
                    status[i] = "error" if errors else "ok"
                    names = cells[i].get("export")
                    if names:
                        text = exported(_aside(client, nb, export_code(names), i))
                        if text is not None:
                            exports[cells[i]["grade_id"]] = text
                        save(_result(cells, nb, status, exports, lives, limit))
                    i += 1
        except (CellTimeoutError, DeadKernelError, RuntimeError, TimeoutError) as error:
            culprit = i if at is None else at
            failed.add(culprit)
            why = "timed out" if isinstance(error, (CellTimeoutError, TimeoutError)) \
                else "the kernel died"
            if culprit == i:
                status[i] = why
                nb.cells[i].outputs.append({"output_type": "error", "ename": why,
                                            "evalue": "", "traceback": [
                                                f"{why}: the grader stopped this cell "
                                                "and went on with a new kernel"]})
                i += 1
            lives += 1
    return _result(cells, nb, status, exports, lives, limit)


def _result(cells, nb, status, exports, lives, limit):
    answers = {c["grade_id"]: {"status": status[k], "outputs": plain_outputs(
        nb.cells[k].outputs, limit)} for k, c in enumerate(cells) if c.get("grade_id")}
    return {"status": status, "answers": answers, "exports": exports, "restarts": lives}


def main(argv):
    job_path, fd = argv[0], int(argv[1])
    os.set_inheritable(fd, False)           # the result pipe is the driver's, not the kernel's
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)

    def save(result):
        data = (json.dumps(result) + "\n").encode()
        while data:
            data = data[os.write(fd, data):]
    save(run(job, save))


if __name__ == "__main__":
    main(sys.argv[1:])
