"""data/derived/kbuild_count.py, the reading of kbuild Makefiles that counted the 405's build
(mackerras2003.BUILD405): conditionals, config-selected lists, composites and subdirectories,
on a toy tree counted by hand."""
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "data" / "derived" / "kbuild_count.py"
spec = importlib.util.spec_from_file_location("kbuild_count", SCRIPT)
kbuild = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kbuild)

CONFIG = {"CONFIG_NET": "y", "CONFIG_EXT2_FS": "y", "CONFIG_NFS_FS": "m"}
MAKEFILES = {
    "fs/Makefile": "obj-y := open.o read_write.o \\\n\tsuper.o\n"
                   "obj-$(CONFIG_EXT2_FS) += ext2/\n"
                   "obj-$(CONFIG_NFS_FS) += nfs/\n"
                   "obj-$(CONFIG_QUOTA) += dquot.o\n"
                   "ifdef CONFIG_NET\nobj-y += socket_fs.o\nelse\nobj-y += nonet.o\nendif\n"
                   "ifeq ($(CONFIG_NFSD),y)\nobj-y += nfsctl.o\nendif\n",
    "fs/ext2/Makefile": "obj-$(CONFIG_EXT2_FS) += ext2.o\n"
                        "ext2-objs := balloc.o dir.o # a composite of two\n",
    "fs/nfs/Makefile": "obj-$(CONFIG_NFS_FS) += inode.o entry.o\n",
}
FILES = {"fs/open.c", "fs/read_write.c", "fs/super.S", "fs/socket_fs.c", "fs/nonet.c",
         "fs/nfsctl.c", "fs/dquot.c", "fs/ext2/balloc.c", "fs/ext2/dir.c",
         "fs/nfs/inode.c", "fs/nfs/entry.S"}


class ToyTree:
    files = FILES

    def read(self, path):
        return MAKEFILES.get(path)


def test_a_toy_tree_is_counted_as_make_would_build_it():
    out = {k: [] for k in ("c y", "S y", "s y", "c m", "S m", "s m", "missing makefile",
                           "no source (generated?)")}
    kbuild.walk(ToyTree(), CONFIG, "fs", set(), out)
    # by hand: open, read_write (.c) and super (.S); socket_fs (CONFIG_NET, not nonet);
    # no dquot (QUOTA unset), no nfsctl (NFSD unset); ext2.o is balloc and dir; nfs as modules
    assert sorted(out["c y"]) == ["fs/ext2/balloc.c", "fs/ext2/dir.c", "fs/open.c",
                                  "fs/read_write.c", "fs/socket_fs.c"]
    assert out["S y"] == ["fs/super.S"]
    assert out["c m"] == ["fs/nfs/inode.c"] and out["S m"] == ["fs/nfs/entry.S"]
    assert not out["missing makefile"] and not out["no source (generated?)"]
