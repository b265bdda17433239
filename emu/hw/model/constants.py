"""Rewrite model.c's table of constants from state.h: ``python -m emu.hw.model.constants``
after adding a constant to the header (tests/hw/test_native.py says when it is needed)."""
import re

from .build import HERE

SKIP = {"EMU_STATE_H", "EXPORT", "HOT", "NOINLINE", "AT_LOAD", "UNLIKELY", "REC"}


def header_names(text=None):
    """Every enum member and #define'd constant of state.h, in order."""
    text = re.sub(r"/\*.*?\*/", "", text or (HERE / "state.h").read_text(), flags=re.S)
    names = [item.split("=")[0].strip() for body in re.findall(r"enum\s*\{(.*?)\}", text, re.S)
             for item in body.split(",") if item.strip()]
    return names + [n for n in re.findall(r"#define\s+([A-Z][A-Z_0-9]+)\s+\S", text)
                    if n not in SKIP]


def table(names, width=96):
    lines, line = [], "   "
    for name in names:
        item = f" C({name})"
        if len(line) + len(item) > width:
            lines.append(line)
            line = "   "
        line += item
    return "\n".join(lines + [line]) + "\n"


def main():
    path = HERE / "model.c"
    text = path.read_text()
    start = text.index("static const constant constants[] = {\n") + \
        len("static const constant constants[] = {\n")
    end = text.index("    {NULL, 0}")
    path.write_text(text[:start] + table(header_names()) + text[end:])


if __name__ == "__main__":
    main()
