"""Keystone in a child process.

Keystone can crash (segfault) on some inputs; in the reader's notebook that would kill the
kernel. So the parent never calls keystone itself: it sends statements here, one JSON request
per line, and gets one JSON answer per statement back, flushed as soon as it is made. If this
process dies, the parent knows exactly which statement it was encoding.

Request:  {"isa": "ppc32", "items": [[statement, address, syntax], ...]}
Answers:  {"hex": "...", "count": n, "stderr": "..."} or {"error": "...", "stderr": "..."}
"""
import json
import os
import sys
import tempfile

ARCH_MODES = {
    "ppc32": ("KS_ARCH_PPC", ("KS_MODE_PPC32", "KS_MODE_BIG_ENDIAN")),
    "ppc64": ("KS_ARCH_PPC", ("KS_MODE_PPC64", "KS_MODE_BIG_ENDIAN")),
    "arm": ("KS_ARCH_ARM", ("KS_MODE_ARM",)),
    "x86": ("KS_ARCH_X86", ("KS_MODE_32",)),
}


def _capture_stderr():
    """Keystone prints some complaints on fd 2 instead of raising: keep them to report."""
    log = tempfile.TemporaryFile(mode="w+b")
    os.dup2(log.fileno(), 2)
    return log


def _new_text(log, start):
    log.seek(start)
    text = log.read().decode("utf-8", "replace").strip()
    return text, log.tell()


def main():
    import keystone

    engines = {}
    log = _capture_stderr()
    seen = 0
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        isa = request["isa"]
        for statement, address, syntax in request["items"]:
            key = (isa, syntax)
            if key not in engines:
                arch, modes = ARCH_MODES[isa]
                mode = 0
                for m in modes:
                    mode |= getattr(keystone, m)
                ks = keystone.Ks(getattr(keystone, arch), mode)
                if syntax == "att":
                    ks.syntax = keystone.KS_OPT_SYNTAX_ATT
                engines[key] = ks
            try:
                encoding, count = engines[key].asm(statement, address)
                answer = {"hex": bytes(encoding or b"").hex(), "count": count or 0}
            except keystone.KsError as error:
                answer = {"error": str(error)}
            answer["stderr"], seen = _new_text(log, seen)
            out.write(json.dumps(answer) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
