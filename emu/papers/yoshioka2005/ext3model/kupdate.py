"""wb_kupdate's pass (routines/x86/kupdate_2612.S): pdflush's periodic write-back of old
data, every dirty_writeback_centisecs, over the VFS's super blocks (the ext3 file system's
and the block devices' pseudo file system's) and their dirty inodes.
"""
from __future__ import annotations

from .structures import (AS, BDEV, I, PF_FLUSHER, SEM, SPIN_FREE, TIMER_MAGIC, TIMER_SIZE,
                         TSK, VSB, VSB_SIZE, _words)

#: fs/super.c 77 of 2.6.12.1 (alloc_super): a super block's s_count starts at S_BIAS
#: (include/linux/fs.h 755)
S_BIAS = 1 << 30

#: mm/page-writeback.c 88 of 2.6.12.1: dirty_expire_centisecs (30 s) at HZ 1000
DIRTY_EXPIRE_JIFFIES = 3000 * 1000 // 100


class KernelKupdate:
    """The Kernel's wb_kupdate pass."""

    def _build_kupdate_state(self, metadata=True):
        """The VFS's super blocks on super_blocks, oldest first (the block devices' pseudo
        file system, made at boot by bdev_cache_init, then the ext3 file system mounted),
        each mounted (s_root), its s_umount free, its s_lock up; the ext3 one's s_op
        ext3_sops and its dirty inodes the writers' files, parked on s_dirty; the block
        devices' one holding the block device's inode (the metadata's pages: the block
        device's page cache, _map_metadata) on its s_dirty; pdflush's tasks PF_FLUSHER;
        inodes_stat (the inodes in use: one per file and the block device's; only
        nr_to_write > 0 reads it). ``metadata`` False (the writers' chunks): the metadata
        stays out of the block device's cache, as the write path has it
        (routines/x86/buffer_2612.S: __getblk_slow's table), and the block devices' super
        block has no dirty inode: a chunk's walk never reaches it (writeback_inodes stops
        when nr_to_write is used up, fs/fs-writeback.c 481-482 of 2.6.12.1, and the first
        file it takes has more dirty pages than a chunk)."""
        if metadata and not self.metadata_mapped:
            self._map_metadata()
        head = self.sym["super_blocks"]
        dentry = self._alloc(64)                    # s_root: a mounted file system's
        self.vsb = {}
        for name in ("bdev", "ext3"):
            sb = self._alloc(VSB_SIZE, align=64)
            self._word(sb + VSB["ROOT"], dentry)
            self._word(sb + VSB["COUNT"], S_BIAS)
            wait = sb + VSB["LOCK"] + SEM["WAIT"]
            self._poke(sb + VSB["LOCK"], _words(1, 0, SPIN_FREE, wait + 4, wait + 4))
            for lst in ("INODES", "DIRTY", "IO"):
                self._poke(sb + VSB[lst], _words(sb + VSB[lst], sb + VSB[lst]))
            self._list_add_tail(sb + VSB["LIST"], head)
            self.vsb[name] = sb
        self._word(self.vsb["ext3"] + VSB["OP"], self.sym["ext3_sops"])
        self._word(self.sym["blockdev_superblock"], self.vsb["bdev"])
        for f in self.files:
            self._list_add_tail(f["inode"] + I["LIST"], self.vsb["ext3"] + VSB["DIRTY"])
        self.bdev_inode = None
        if self.metadata_mapped:
            bdev_inode = self._read(self._read(self.bdev + BDEV["MAPPING"]) + AS["HOST"])
            self._list_add_tail(bdev_inode + I["LIST"], self.vsb["bdev"] + VSB["DIRTY"])
            self.bdev_inode = bdev_inode
        for task in self.pdflush:
            self._word(task + TSK["FLAGS"], self._read(task + TSK["FLAGS"]) | PF_FLUSHER)
        self._poke(self.sym["inodes_stat"], _words(len(self.files) + 1, 0))
        timer = self._alloc(TIMER_SIZE)            # wb_timer, set up and not pending (its
        self._poke(timer, _words(0, 0, 0, SPIN_FREE, TIMER_MAGIC,     # expiry runs the pass)
                                 self.sym["wb_timer_fn"], 0, 0))
        self._word(self.sym["wb_timer"], timer)

    def _list_add_tail(self, entry, head):
        """list_add_tail(entry, head) from Python, for the built state."""
        tail = self._read(head + 4)
        self._poke(entry, _words(head, tail))
        self._word(tail, entry)
        self._word(head + 4, entry)

    def kupdate_pass(self, old=False, k=0, measure=None):
        """One wb_kupdate pass on CPU k's pdflush (routines/x86/kupdate_2612.S), the ext3
        super block dirty (ext3_new_block sets s_dirt at each allocation, and 5 s of
        writes allocate thousands of blocks), the files' inodes dirtied now (background
        writeout re-dirties them young, fs-writeback.c 213-215), the block device's inode
        dirtied dirty_expire_centisecs ago and one jiffy more if ``old`` (it is due: the
        pass stops at writeback_acquire, the disk's queue held by writeback), else now
        (it stops at older_than_this). ``measure`` as whole_commit's (default: the Run's
        cycles); returns its result."""
        if not hasattr(self, "vsb"):
            self._build_kupdate_state()
        if self.bdev_inode is None:
            raise RuntimeError("the metadata is not in the block device's cache: a Kernel "
                               "whose paced writes ran the writers' chunks has no kupdate pass")
        now = self._read(self.sym["jiffies"])
        self._poke(self.vsb["ext3"] + VSB["DIRT"], bytes([1]))
        for f in self.files:
            self._word(f["inode"] + I["DIRTIED_WHEN"], now)
        when = (now - (DIRTY_EXPIRE_JIFFIES + 1 if old else 0)) & 0xFFFFFFFF
        self._word(self.bdev_inode + I["DIRTIED_WHEN"], when)
        measure = measure or (lambda run: run().cycles)
        return measure(lambda: self.machine.call("pdflush_kupdate", self.pdflush[k]))
