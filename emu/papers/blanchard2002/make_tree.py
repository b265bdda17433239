"""2.4's recursive make, as the builds ran it: the directories `make bzImage` walks, the
compiles of each, and what waits for what.

The paper's kernel was "2.4.18 x86 with Martin's config", a configuration no source gives,
and no 2.4.18 tree was among the fetchable ones; the stand-in is 2.4.0-prerelease (379a6be1e
in github.com/schwabe/davej-history, the newest 2.4 there) under arch/i386/defconfig. Its
Makefiles say (Makefile and Rules.make of that commit):

* the top make compiles init/main.o and init/version.o and runs `$(MAKE) -C` into each of
  SUBDIRS (Makefile 128, and arch/i386/Makefile 87's three), all of them prerequisites of
  vmlinux (Makefile 245, 281-284), so they run side by side; vmlinux links when all are
  done (the build's serial link, BUILD's ``link_s``);
* in a directory, `first_rule: sub_dirs` then `$(MAKE) all_targets` (Rules.make 37-38): its
  subdirectories (subdir-y, sorted: Rules.make 140-145) each a make of its own, side by
  side, and only when all are done a second make that compiles the directory's objects and
  links them, `ld -r` into its O_TARGET (Rules.make 87-96; `ar` for an L_TARGET, 111);
* the builds ran `MAKE="make -j14" make -j14 bzImage` (section 4): every $(MAKE) is `make
  -j14`, and a make given -j on its command line leaves GNU make's jobserver ("-jN forced in
  submake: disabling jobserver mode"), so each make has 14 job slots of its own (MAKE_J),
  a sub-make holding one of its parent's while it runs, and nothing caps the whole build
  but the CPUs.

TREE was counted by data/derived/kbuild24_tree.py (2.4.0-prerelease, arch/i386/defconfig):
351 compiles in the directories and init's 2, against BUILD's estimate of 600 for 2.4.18
with Martin's config (its range reaching down to the count: 350-900); the tree gives the build's shape, BUILD its size (tree_jobs).
"""
from __future__ import annotations

from ...present import data

#: the builds' make -j, for the top make and every sub-make (section 4, seed line 101:
#: MAKE="make -j14" /usr/bin/time make -j14 bzImage; data/blanchard2002_text_numbers)
MAKE_J = int(data.load("blanchard2002_text_numbers").set_index("quantity").loc[
    "make -j of the p690 builds (the top make and by MAKE each sub-make)", "value"])

#: what the top make compiles itself before vmlinux links (Makefile 245)
TOP_OBJECTS = ("init/main.o", "init/version.o")

#: the top make's $(MAKE) -C directories, in its order (Makefile 128, arch/i386/Makefile 87)
SUBDIRS = ("kernel", "drivers", "mm", "fs", "net", "ipc", "lib", "arch/i386/kernel",
           "arch/i386/mm", "arch/i386/lib")

#: {directory: (compiles, subdirectories, whether its O_TARGET links the subdirectories'
#: objects)} (data/derived/kbuild24_tree.py, 2.4.0-prerelease under arch/i386/defconfig)
TREE = {
    "kernel": (26, (), False),
    "drivers": (0, ("block", "cdrom", "char", "ide", "media", "misc", "net", "parport", "pci",
                    "pcmcia", "pnp", "scsi", "sound", "usb", "video"), False),
    "drivers/block": (5, (), False),
    "drivers/cdrom": (1, (), False),
    "drivers/char": (17, ("drm", "pcmcia"), False),
    "drivers/char/drm": (2, (), False),
    "drivers/char/pcmcia": (0, (), False),
    "drivers/ide": (10, (), False),
    "drivers/media": (0, ("radio", "video"), True),
    "drivers/media/radio": (0, (), False),
    "drivers/media/video": (0, (), False),
    "drivers/misc": (0, (), False),
    "drivers/net": (7, ("pcmcia",), False),
    "drivers/net/pcmcia": (2, (), False),
    "drivers/parport": (0, (), False),
    "drivers/pci": (6, (), False),
    "drivers/pcmcia": (9, (), False),
    "drivers/pnp": (3, (), False),
    "drivers/scsi": (15, (), False),
    "drivers/sound": (4, (), False),
    "drivers/usb": (4, ("storage",), False),
    "drivers/usb/storage": (5, (), False),
    "drivers/video": (1, (), False),
    "mm": (18, (), False),
    "fs": (30, ("autofs4", "devpts", "ext2", "isofs", "lockd", "nfs", "nfsd", "partitions",
                "proc"), True),
    "fs/autofs4": (6, (), False),
    "fs/devpts": (2, (), False),
    "fs/ext2": (12, (), False),
    "fs/isofs": (5, (), False),
    "fs/lockd": (11, (), False),
    "fs/nfs": (10, (), False),
    "fs/nfsd": (11, (), False),
    "fs/partitions": (2, (), False),
    "fs/proc": (10, (), False),
    "net": (2, ("802", "core", "ethernet", "ipv4", "packet", "sched", "sunrpc", "unix"), True),
    "net/802": (3, (), False),
    "net/core": (12, (), False),
    "net/ethernet": (2, (), False),
    "net/ipv4": (28, (), False),
    "net/packet": (1, (), False),
    "net/sched": (1, (), False),
    "net/sunrpc": (14, (), False),
    "net/unix": (3, (), False),
    "ipc": (4, (), False),
    "lib": (6, (), False),
    "arch/i386/kernel": (28, (), False),
    "arch/i386/mm": (4, (), False),
    "arch/i386/lib": (9, (), False),
}


def compiles(tree=TREE, top=TOP_OBJECTS):
    """The tree's compiles, the top make's included."""
    return len(top) + sum(n for n, _, _ in tree.values())


def make_order(tree=TREE, subdirs=SUBDIRS, top=TOP_OBJECTS):
    """[(directory, compiles)] in the order the makes reach them: the top make's own
    objects ("" for the top directory), then each of ``subdirs`` with its subdirectories
    (each before its parent's objects: first_rule), depth first."""
    out = [("", len(top))]

    def visit(path):
        n, subs, _ = tree[path]
        for sub in subs:
            visit(f"{path}/{sub}")
        out.append((path, n))

    for path in subdirs:
        visit(path)
    return out


def tree_jobs(jobs, tree=TREE, subdirs=SUBDIRS, top=TOP_OBJECTS):
    """{directory: compiles} with the tree's shape and ``jobs`` compiles in all: each
    directory's count times jobs over the tree's, rounded to whole jobs by the largest
    remainders (ties in make's order), so that they sum to round(jobs)."""
    order = make_order(tree, subdirs, top)
    total, want = compiles(tree, top), int(round(jobs))
    exact = [(path, n * want / total) for path, n in order]
    out = {path: int(x) for path, x in exact}
    short = want - sum(out.values())
    by_remainder = sorted(range(len(exact)), key=lambda k: (-(exact[k][1] % 1), k))
    for k in by_remainder[:short]:
        out[exact[k][0]] += 1
    return out


def linked_objects(tree=TREE):
    """{directory: the compiled objects its `ld -r` reads}: its own and, when its O_TARGET
    links them (TREE's third field), those of its subdirectories' O_TARGETs, theirs
    included."""
    out = {}

    def count(path):
        if path not in out:
            n, subs, links = tree[path]
            out[path] = n + (sum(count(f"{path}/{s}") for s in subs) if links else 0)
            for s in subs:
                count(f"{path}/{s}")
        return out[path]

    for path in tree:
        count(path)
    return out


def ld_r_share(tree=TREE, top=TOP_OBJECTS):
    """The objects every `ld -r` of the build reads (linked_objects), over its compiles: the
    ld -r's cycles in all, in the final link's (which reads every object once)."""
    return sum(linked_objects(tree).values()) / compiles(tree, top)
