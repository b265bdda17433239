"""Count the compiles of a 2.5-era kbuild build from its Makefiles: every object of obj-y,
obj-m and lib-y (composites expanded into their parts) in the directories the top Makefile's
init-y, core-y, drivers-y, net-y and libs-y and the arch Makefile's name, under a defconfig;
then what else `make` compiles there (asm-offsets, arch/ppc's boot wrapper, the build's host
programs). Reads the tree from git: file names from ls-tree, Makefiles by git show (a mirror
that lacks some large blobs serves). A reading of make, not make: conditionals (ifdef,
ifeq), +=, := and $(CONFIG_...) are followed; lines that call a make function are skipped
(the lists they rewrite are kept as they were).

It gave emu.papers.mackerras2003.BUILD405 (the 405's compile steps a build):

    python data/derived/kbuild_count.py <linux-2.5 git dir> 3007e2ef10 ppc \
        arch/ppc/configs/walnut_defconfig CONFIG_MATH_EMULATION=y

3007e2ef10 is "Linux 2.5.66" in github.com/dmgerman/history-token.
"""
import re
import subprocess
import sys
from collections import Counter


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


class Tree:
    def __init__(self, repo, rev):
        self.repo, self.rev = repo, rev
        self.files = set(git(repo, "ls-tree", "-r", "--name-only", rev).split("\n"))

    def read(self, path):
        try:
            return git(self.repo, "show", f"{self.rev}:{path}")
        except subprocess.CalledProcessError:
            return None


def read_config(text, extra):
    config = {}
    for line in text.split("\n"):
        m = re.match(r"(CONFIG_\w+)=(.*)", line)
        if m:
            config[m.group(1)] = m.group(2).strip('"')
    for e in extra:
        k, v = e.split("=")
        config[k] = v
    return config


def logical_lines(text):
    out, cur = [], ""
    for line in text.split("\n"):
        line = re.sub(r"(?<!\\)#.*", "", line)
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        out.append(cur + line)
        cur = ""
    return out


def expand(value, variables, config):
    def sub(m):
        name = m.group(1)
        if name.startswith("CONFIG_"):
            return config.get(name, "")
        if name.startswith("subst ") or name.startswith("patsubst ") or name.startswith("shell "):
            return ""
        return " ".join(variables.get(name, []))
    prev = None
    while prev != value:
        prev = value
        value = re.sub(r"\$\(([^()]*)\)", sub, value)
    return value


def evaluate(text, config, variables=None):
    """The Makefile's variables {name: [words]} with its conditionals followed."""
    variables = {} if variables is None else variables
    stack = []                       # [active?]
    for line in logical_lines(text):
        s = line.strip()
        if not s:
            continue
        active = all(stack)
        m = re.match(r"(ifdef|ifndef)\s+(\S+)", s)
        if m:
            v = expand(f"$({m.group(2)})", variables, config)
            stack.append(bool(v.strip()) == (m.group(1) == "ifdef"))
            continue
        # ifeq (a,b) or ifeq "a" "b"
        m = (re.match(r"(ifeq|ifneq)\s*\((.*),(.*)\)\s*$", s) or
             re.match(r"(ifeq|ifneq)\s+['\"](.*)['\"]\s+['\"](.*)['\"]", s))
        if m:
            a = expand(m.group(2), variables, config).strip()
            b = expand(m.group(3), variables, config).strip()
            stack.append((a == b) == (m.group(1) == "ifeq"))
            continue
        if s.startswith("else"):
            stack[-1] = not stack[-1]
            rest = s[4:].strip()
            if rest:                             # else ifdef ...
                raise NotImplementedError(s)
            continue
        if s.startswith("endif"):
            stack.pop()
            continue
        if not active or line.startswith("\t"):
            continue
        m = re.match(r"([\w$().\-/]+)\s*(:=|\+=|=|\?=)\s*(.*)", s)
        if m:
            name = expand(m.group(1), variables, config).strip()
            if not name or " " in name:
                continue
            if re.search(r"\$\((patsubst|filter|subst|shell|addprefix|foreach|wildcard|call|if|sort) ", m.group(3)):
                continue                         # a function: the lists before it are kept
            words = expand(m.group(3), variables, config).split()
            if m.group(2) == "+=":
                variables.setdefault(name, []).extend(words)
            elif m.group(2) == "?=":
                variables.setdefault(name, words)
            else:
                variables[name] = words
    return variables


def walk(tree, config, directory, seen, out, modular=False):
    """Every compile in ``directory``'s Makefile (and the directories it names)."""
    if directory in seen:
        return
    seen.add(directory)
    text = tree.read(f"{directory}/Makefile")
    if text is None:
        out["missing makefile"].append(directory)
        return
    v = evaluate(text, config)
    objs = [(o, False) for o in v.get("obj-y", []) + v.get("lib-y", [])] + \
        [(o, True) for o in v.get("obj-m", [])]
    objs += [(o, False) for o in v.get("subdir-y", [])] + [(o, True) for o in v.get("subdir-m", [])]
    for obj, mod in objs:
        if obj.endswith("/") or ("." not in obj.split("/")[-1]):
            walk(tree, config, f"{directory}/{obj.rstrip('/')}", seen, out, mod)
            continue
        compile_object(tree, v, directory, obj, out, mod or modular)


def compile_object(tree, v, directory, obj, out, modular, depth=0):
    stem = obj[:-2] if obj.endswith(".o") else obj
    parts = v.get(f"{stem}-objs", []) + v.get(f"{stem}-y", [])
    if parts and depth < 3:
        for p in parts:
            compile_object(tree, v, directory, p, out, modular, depth + 1)
        return
    path = f"{directory}/{stem}"
    key = "m" if modular else "y"
    if f"{path}.c" in tree.files:
        out[f"c {key}"].append(path + ".c")
    elif f"{path}.S" in tree.files:
        out[f"S {key}"].append(path + ".S")
    elif f"{path}.s" in tree.files:
        out[f"s {key}"].append(path + ".s")
    else:
        out["no source (generated?)"].append(path)


def sources(tree, directory, names):
    """The .c or .S of each object name in ``directory`` (those with a source)."""
    found = []
    for n in names:
        stem = n[:-2] if n.endswith(".o") else n
        for ext in (".c", ".S"):
            if f"{directory}/{stem}{ext}" in tree.files:
                found.append(f"{directory}/{stem}{ext}")
                break
    return found


def host_programs(tree, config, directory, extra=None):
    """The compiles of ``directory``'s host-progs (a program of several objects: each)."""
    v = evaluate(tree.read(f"{directory}/Makefile"), config, dict(extra or {}))
    names = []
    for prog in v.get("host-progs", []):
        names += v.get(f"{prog}-objs", []) or [prog]
    names += [o for o in v.get("always", []) if o.endswith(".o")]
    return sources(tree, directory, names)


def extra_compiles(tree, config, arch, out):
    """What else `make` (arch/ppc: zImage) compiles: asm-offsets, the boot wrapper, the
    build's host programs."""
    out["asm-offsets"] = sources(tree, f"arch/{arch}/kernel", ["asm-offsets"])
    boot = f"arch/{arch}/boot"
    v = evaluate(tree.read(f"{boot}/Makefile"), config)
    wrapper = []
    for sub in v.get("subdir-y", []):
        w = evaluate(tree.read(f"{boot}/{sub}/Makefile"), config)
        wrapper += sources(tree, f"{boot}/{sub}", w.get("obj-y", []))
    for sub in v.get("bootdir-y", []):
        w = evaluate(tree.read(f"{boot}/{sub}/Makefile"), config)
        wrapper += sources(tree, f"{boot}/{sub}", w.get("boot-y", []))
    out["boot wrapper"] = wrapper
    out["host programs"] = (host_programs(tree, config, "scripts")
                            + host_programs(tree, config, "usr")
                            + sources(tree, f"{boot}/utils", v.get("tools-y", [])))


def main():
    repo, rev, arch, defconfig, *extra = sys.argv[1:]
    tree = Tree(repo, rev)
    config = read_config(tree.read(defconfig), extra)
    top = evaluate(tree.read("Makefile"), config, {"ARCH": [arch]})
    archv = evaluate(tree.read(f"arch/{arch}/Makefile"), config,
                     {k: list(w) for k, w in top.items()})
    dirs, objs = [], []
    for group in ("head-y", "init-y", "core-y", "drivers-y", "net-y", "libs-y"):
        for w in archv.get(group, []):
            (dirs if w.endswith("/") else objs).append(w)
    out = {k: [] for k in ("c y", "S y", "s y", "c m", "S m", "s m", "missing makefile",
                           "no source (generated?)")}
    seen = set()
    for d in dirs:
        walk(tree, config, d.rstrip("/"), seen, out)
    for o in objs:
        d, _, name = o.rpartition("/")
        compile_object(tree, {}, d, name, out, False)
    extra_compiles(tree, config, arch, out)
    for k, vals in out.items():
        print(f"{k}: {len(vals)}")
        if k in ("asm-offsets", "boot wrapper", "host programs"):
            print("   ", " ".join(vals))
    by_top = Counter(p.split("/")[0] for k in ("c y", "S y", "c m", "S m") for p in out[k])
    print("by top directory:", dict(by_top))
    print("missing makefiles:", out["missing makefile"][:20])
    print("no source:", out["no source (generated?)"][:30])
    return out


if __name__ == "__main__":
    main()
