"""The block device and the ext3 file system: its queue, the block groups, each writer's file,
the cached metadata buffers and the radix trees that hold them.
"""
from __future__ import annotations

import numpy as np

from .pacing import KJOURNALD_CPU
from .structures import (ADDR_PER_BLOCK, AS, AS_HASH_SHIFT, BDEV, BDEV_SIZE, BH, BH_BITS, BH_SIZE,
                         BLK_BATCH_REQ,
                         BLKDEV_MAX_RQ, BLOCKS_PER_GROUP, DATA_PER_GROUP, DATA_START_BIT,
                         DIND_START, DISK_IRQ, EI, FILE_SIZE, FIRST_INDEX, FMODE_WRITE, GROUP_NO,
                         GROUP_START, HOST, I, INODES_PER_GROUP, INODE_SIZE, INODE_TABLE_BLOCKS,
                         IRQ_DESC_SIZE, I_DIRTY, J, MAPPING_SIZE, META_SLOTS, PAGE, PAGE_STRUCT,
                         PCPU, PG, PG_BITS, PS, Q, QUEUE_SIZE, RADIX_HEIGHT, RADIX_NODE, RN, RR,
                         RW_LOCK_BIAS, SB, SB_SIZE, SPIN_FREE, S_IFBLK, S_IFREG_644, XTIME, _words)


class KernelFileSystem:
    """The Kernel's block device, block groups, files and cached metadata."""

    def _build_block_device(self):
        """The block device: its address space (a radix tree of height 4 holding one
        level-3 node over the files' part of the disk, and nothing below it there) and the
        table of cached metadata buffer heads."""
        self.bdev = self._alloc(BDEV_SIZE)
        mapping = self._alloc(MAPPING_SIZE)
        top, below = self._alloc(RADIX_NODE), self._alloc(RADIX_NODE)
        self._word(top + RN["SLOTS"] + 4 * ((GROUP_START >> 18) & 63), below)
        self._word(top + RN["COUNT"], 1)
        self._word(below + RN["COUNT"], 1)          # a node of other metadata elsewhere
        self._word(below + RN["SLOTS"] + 4 * 63, below)
        self._poke(mapping + AS["PAGE_TREE"], _words(RADIX_HEIGHT, 0, top))
        self._word(mapping + AS["TREE_LOCK"], RW_LOCK_BIAS)
        self._word(self.bdev + BDEV["MAPPING"], mapping)
        self._build_queue()

    def _build_queue(self):
        """The disk's request queue (noop's list, empty; its request list's counts and
        thresholds as blk_queue_congestion_threshold sets them for BLKDEV_MAX_RQ) and its
        gendisk; the block device's size past the files' blocks; no bounce (the queue's
        bounce_pfn reaches blk_max_pfn)."""
        q = self.queue = self._alloc(QUEUE_SIZE, align=128)
        head = q + Q["QUEUE_HEAD"]
        self._poke(head, _words(head, head))
        self._word(q + Q["QUEUE_LOCK"], q + Q["LOCK"])
        self._word(q + Q["LOCK"], SPIN_FREE)
        for rw in range(2):
            wait = q + Q["RQ_WAIT"] + 12 * rw
            self._poke(wait, _words(SPIN_FREE, wait + 4, wait + 4))
        nr = BLKDEV_MAX_RQ
        self._poke(q + Q["NR_REQUESTS"], _words(nr, nr - nr // 8 + 1, nr - nr // 8 - nr // 16 - 1,
                                                self.sym["__make_request"], 0, 0xFFFFFFFF,
                                                1024))
        self._word(self.sym["blk_max_pfn"], 0xFFFFFFFF)
        self._poke(q + Q["NR_BATCHING"], _words(BLK_BATCH_REQ, self.bdi))     # and its BDI
        pages = self.request_pages          # max_sectors and the segments the driver takes
        self._poke(q + Q["MAX_SECTORS"], _words(pages * PAGE // 512, pages, pages))
        disk = self._alloc(64)
        self._poke(self.bdev + BDEV["QUEUE"], _words(q, disk, 0xFFFFFFFF))
        buckets = 1 << AS_HASH_SHIFT        # the elevator's hash of request ends: empty
        table = self._alloc(8 * buckets)
        self._poke(table, _words(*[table + 8 * b + d for b in range(buckets) for d in (0, 0)]))
        self._word(self.sym["as_hash_table"], table)
        host = self._alloc(64)
        self._word(host + HOST["LOCK"], SPIN_FREE)
        self._word(self.sym["scsi_host"], host)
        desc = self.sym["irq_desc"] + DISK_IRQ * IRQ_DESC_SIZE
        self._poke(desc, _words(0, self.sym["host_intr"], host, SPIN_FREE))
        for pcpu in self.pcpu:              # each CPU's scsi_done_q: empty
            at = pcpu + PCPU["SCSI_DONE_Q"]
            self._poke(at, _words(at, at))

    def _metadata_block(self, group=GROUP_NO, bit=None):
        """A cached metadata block (a 4 KB block and its buffer head, its page set up
        active): bit ``bit`` of ``group``, or the next free metadata bit of the inodes'
        group. Returns (block number, bh, data address)."""
        if bit is None:
            bit = self._next_meta_bit
            self._next_meta_bit += 1
            if self._next_meta_bit > DATA_START_BIT:
                raise ValueError("the run needs more metadata blocks than the group keeps "
                                 "below its data")
        if len(self._meta) == META_SLOTS:
            raise ValueError(f"more than {META_SLOTS} cached metadata blocks: fewer "
                             "max_records or CPUs")
        block = group * BLOCKS_PER_GROUP + bit
        data = self._alloc(PAGE, align=PAGE)
        bh = self._alloc(BH_SIZE, align=16)
        page = self.meta_page_structs + PAGE_STRUCT * len(self._meta)
        flags = sum(1 << PG_BITS[b] for b in ("uptodate", "lru", "active", "referenced"))
        self._poke(page, _words(flags, 1))
        state = (1 << BH_BITS["Uptodate"]) | (1 << BH_BITS["Mapped"])
        self._poke(bh, _words(state, bh, page, 0, PAGE, block, data, self.bdev))
        self._meta.append((block, bh))
        return block, bh, data

    def _build_groups(self):
        """The super block, the group descriptor block, and the block groups: GROUP_NO holds
        the files' inodes (its inode table's first block) and the run's indirect blocks;
        the groups after it hold the files' data, ``groups_per_file`` each."""
        self.sb = sb = self._alloc(SB_SIZE, align=128)
        self.gd_block, self.gd_bh, gd_data = self._metadata_block(bit=INODE_TABLE_BLOCKS + 1)
        self.itable_block, self.itable_bh, self.itable = self._metadata_block(bit=2)
        group_desc = self._alloc(64)
        self._word(group_desc + 4 * (GROUP_NO >> 7), self.gd_bh)
        self.bitmaps = {}
        for g in range(GROUP_NO, GROUP_NO + 1 + self.cpus * self.groups_per_file):
            used = np.zeros(BLOCKS_PER_GROUP, np.uint8)
            used[:DATA_START_BIT] = 1                   # metadata, now and to come
            if (g - GROUP_NO - 1) % self.groups_per_file == 0:
                used[DATA_START_BIT:DATA_START_BIT + self.used_blocks] = 1
            block, _, data = self._metadata_block(group=g, bit=0)
            self._poke(data, np.packbits(used, bitorder="little").tobytes())
            self.bitmaps[g] = data
            self._poke(gd_data + 32 * (g & 127),
                       _words(block, block + 1, self.itable_block if g == GROUP_NO else
                              block + 2) + DATA_PER_GROUP.to_bytes(2, "little"))
        self._poke(sb, _words(0, PAGE, self.bdev, self.journal, group_desc, 0,
                              INODES_PER_GROUP, BLOCKS_PER_GROUP))
        self._poke(sb + SB["FREE_LOCK"], _words(SPIN_FREE, 10_000_000))
        self._word(sb + SB["BGL_LOCK"], SPIN_FREE)

    def block_of(self, k, offset):
        """The block CPU k's file has for its page FIRST_INDEX + offset: its groups' data
        blocks, in order."""
        offset += self.used_blocks
        group = GROUP_NO + 1 + k * self.groups_per_file + offset // DATA_PER_GROUP
        return group * BLOCKS_PER_GROUP + DATA_START_BIT + offset % DATA_PER_GROUP

    def _build_file(self, k):
        """CPU k's file: its inode (in the inode table's first block, inode k of the group),
        its address space and radix tree, its double-indirect block and the indirect blocks
        its records will need."""
        inode = self._alloc(INODE_SIZE, align=64)
        mapping = inode + I["I_DATA"]
        ino = GROUP_NO * INODES_PER_GROUP + 1 + k
        dind_block, dind_bh, dind = self._metadata_block()
        first = FIRST_INDEX - DIND_START
        count = (first + self.max_records) // ADDR_PER_BLOCK - first // ADDR_PER_BLOCK + 1
        if first // ADDR_PER_BLOCK + count > ADDR_PER_BLOCK:
            raise ValueError("the records go past the double-indirect range")
        for j in range(first // ADDR_PER_BLOCK, first // ADDR_PER_BLOCK + count):
            ind_block, _, _ = self._metadata_block()
            self._word(dind + 4 * j, ind_block)
        size = FIRST_INDEX * PAGE
        self._word(inode + EI["DIND"], dind_block)
        self._poke(inode + EI["LAST_ALLOC_LOGICAL"],
                   _words(FIRST_INDEX - 1, self.block_of(k, 0) - 1))
        self._poke(inode + EI["DISKSIZE"], _words(size, size >> 32))
        self._word(inode + EI["TRUNCATE_SEM"], 1)
        self._poke(inode + I["INO"], _words(ino, 1, S_IFREG_644, 1, 0, 0))
        self._poke(inode + I["SIZE"], _words(size, size >> 32, XTIME, 0, XTIME, 0, XTIME, 0))
        self._word(inode + I["BLKBITS"], 12)
        self._word(inode + I["BLOCKS"], FIRST_INDEX * 8)
        self._word(inode + I["LOCK"], SPIN_FREE)
        self._word(inode + I["SEM"], 1)
        self._word(inode + I["SB"], self.sb)
        self._word(inode + I["MAPPING"], mapping)
        self._word(inode + I["STATE"], I_DIRTY)
        bucket = self._alloc(4, align=4)    # hashed, as iget leaves it (fs/inode.c
        self._word(bucket, inode + I["HASH"])   # __insert_inode_hash): its bucket's
        self._word(inode + I["HASH"] + 4, bucket)   # first, pprev the bucket
        top, level3 = self._alloc(RADIX_NODE), self._alloc(RADIX_NODE)
        self._word(top + RN["SLOTS"] + 4 * ((FIRST_INDEX >> 18) & 63), level3)
        self._word(top + RN["COUNT"], 1)
        self._poke(mapping + AS["HOST"], _words(inode, RADIX_HEIGHT, 0, top))
        self._word(mapping + AS["TREE_LOCK"], RW_LOCK_BIAS)
        self._word(mapping + AS["A_OPS"], self.sym["ext3_ordered_aops"])
        self._word(mapping + AS["PRIVATE_LOCK"], SPIN_FREE)
        self._word(mapping + AS["BDI"], self.bdi)
        file = self._alloc(FILE_SIZE)
        self._poke(file, _words(1, 1, size, size >> 32, mapping, inode, FMODE_WRITE | 1))
        return {"inode": inode, "mapping": mapping, "file": file, "ino": ino}

    def _finish_block_device(self):
        self._word(self.journal + J["DEV"], self.bdev)
        for bh in self._log_bhs:
            self._word(bh + BH["BDEV"], self.bdev)
        meta = b"".join(_words(block, bh) for block, bh in self._meta)
        self._poke(self.bdev + BDEV["META_N"], _words(len(self._meta)) + meta)

    def _map_metadata(self):
        """The metadata blocks' pages in the block device's page cache, as __getblk leaves
        them (fs/buffer.c grow_dev_page: each page in the block device's mapping at its
        block's index, PG_private, the buffer its private): the block device's tree (the
        nodes below its top node made here), its inode (dirty: I_DIRTY, as the files'),
        def_blk_aops and the disk's backing_dev_info; a dirty page with the tree's dirty tag
        and counted in CPU 0's nr_dirty, as mark_buffer_dirty would have left it (phase 7
        on kjournald's CPU). Until then the model's metadata belongs to no mapping:
        __find_get_block_slow stands for the block device's cache with its table of
        metadata (routines/x86/buffer_2612.S), and the data blocks' look-ups there
        (unmap_underlying_metadata) find the tree empty below its top."""
        mapping = self._read(self.bdev + BDEV["MAPPING"])
        inode = self._alloc(INODE_SIZE, align=64)
        self._word(inode + I["STATE"], I_DIRTY)
        self._poke(inode + I["MODE"], S_IFBLK.to_bytes(2, "little"))    # bdget (fs/
                                                                        # block_dev.c 376)
        self._word(inode + I["MAPPING"], mapping)
        self._word(inode + I["LOCK"], SPIN_FREE)
        self._word(mapping + AS["HOST"], inode)
        self._word(mapping + AS["A_OPS"], self.sym["blkdev_aops"])
        self._word(mapping + AS["BDI"], self.bdi)
        self._word(mapping + AS["PRIVATE_LOCK"], SPIN_FREE)
        self._word(mapping + AS["NRPAGES"], len(self._meta))
        private, dirty = 1 << PG_BITS["private"], 1 << PG_BITS["dirty"]
        dirtied = 0
        for block, bh in self._meta:
            page = self._read(bh + BH["PAGE"])
            flags = self._read(page + PG["FLAGS"])
            self._word(page + PG["FLAGS"], flags | private)
            self._poke(page + PG["PRIVATE"], _words(bh, mapping, block))
            self._radix_insert(mapping, block, page, tagged=bool(flags & dirty))
            dirtied += bool(flags & dirty)
        state = self.pcpu[KJOURNALD_CPU] + PCPU["PAGE_STATE"] + PS["NR_DIRTY"]
        self._word(state, self._read(state) + dirtied)
        self.metadata_mapped = True

    def _radix_insert(self, mapping, index, item, tagged=False):
        """radix_tree_insert into a tree of height RADIX_HEIGHT, the missing nodes made
        (each node's count: its slots in use); ``tagged``: radix_tree_tag_set of the dirty
        tag along the path."""
        node = self._read(mapping + AS["PAGE_TREE"] + RR["RNODE"])
        for level in range(RADIX_HEIGHT - 1, 0, -1):
            offset = (index >> (6 * level)) & 63
            if tagged:
                self._set_tag(node, offset)
            slot = node + RN["SLOTS"] + 4 * offset
            child = self._read(slot)
            if child == node:
                raise ValueError(f"block {index} falls under the tree's stand-in for other "
                                 "metadata")
            if not child:
                child = self._alloc(RADIX_NODE)
                self._word(slot, child)
                self._word(node + RN["COUNT"], self._read(node + RN["COUNT"]) + 1)
            node = child
        slot = node + RN["SLOTS"] + 4 * (index & 63)
        if self._read(slot):
            raise ValueError(f"block {index} is in the tree already")
        if tagged:
            self._set_tag(node, index & 63)
        self._word(slot, item)
        self._word(node + RN["COUNT"], self._read(node + RN["COUNT"]) + 1)

    def _set_tag(self, node, offset):
        """The dirty tag (tag 0: its 64 bits first in the node's tags) of slot ``offset``."""
        word = node + RN["TAGS"] + 4 * (offset >> 5)
        self._word(word, self._read(word) | 1 << (offset & 31))
