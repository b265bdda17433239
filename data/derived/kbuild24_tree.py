"""The directory tree 2.4's recursive make walks for `make bzImage`, from a 2.4 tree's own
Makefiles under a defconfig: for each directory the compiles of its obj-y (composites
expanded into their parts; modules left out, as bzImage builds none), its subdirectories
(subdir-y, in Rules.make's sorted order), and whether its O_TARGET or L_TARGET links them in
(their objects listed in its obj-y: the `$(join $(subdir-y), ...)` line or by name).
The top directories are the top Makefile's SUBDIRS and the arch Makefile's; init/main.o and
init/version.o the top make compiles itself. A reading of make, not make
(kbuild_count.py's: conditionals and $(CONFIG_...) followed, function lines skipped).

It gave emu.papers.blanchard2002.make_tree.TREE:

    python data/derived/kbuild24_tree.py <2.4 git dir> 379a6be1e i386 arch/i386/defconfig

379a6be1e is 2.4.0-prerelease in github.com/schwabe/davej-history (the newest 2.4 there).
"""
import re
import sys

from kbuild_count import Tree, compile_object, evaluate, read_config


def directory(tree, config, path, out):
    """Add ``path`` and the directories below it to ``out``: {path: (compiles, subdirs,
    links its subdirectories' objects)}."""
    text = tree.read(f"{path}/Makefile")
    if text is None:
        out[path] = (0, (), False)
        return
    v = evaluate(text, config)
    found = {k: [] for k in ("c y", "S y", "s y", "c m", "S m", "s m",
                             "no source (generated?)")}
    for obj in v.get("obj-y", []):
        if "/" not in obj:
            compile_object(tree, v, path, obj, found, False)
    compiles = sum(len(found[k]) for k in ("c y", "S y", "s y"))
    subdirs = tuple(sorted(set(v.get("subdir-y", []))))
    target = v.get("O_TARGET") or v.get("L_TARGET")
    linked = bool(target) and ("$(join $(subdir-y)" in text or any(
        "/" in obj for obj in v.get("obj-y", [])))
    out[path] = (compiles, subdirs, linked)
    for sub in subdirs:
        directory(tree, config, f"{path}/{sub}", out)


def main():
    repo, rev, arch, defconfig = sys.argv[1:5]
    tree = Tree(repo, rev)
    config = read_config(tree.read(defconfig), [])
    top = evaluate(tree.read("Makefile"), config, {"ARCH": [arch]})
    archv = evaluate(tree.read(f"arch/{arch}/Makefile"), config,
                     {k: list(w) for k, w in top.items()})
    subdirs = archv.get("SUBDIRS", top.get("SUBDIRS", []))
    out = {}
    for d in subdirs:
        directory(tree, config, d, out)
    print("SUBDIRS =", subdirs)
    print("TREE = {")
    for path, (n, subs, linked) in out.items():
        print(f"    {path!r}: ({n}, {subs!r}, {linked}),")
    print("}")
    print("compiles:", sum(n for n, _, _ in out.values()), "+ init/main.o, init/version.o")


if __name__ == "__main__":
    main()
