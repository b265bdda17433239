"""Checking the file system after a run: every page, buffer and block where 2.6.12 leaves it.
"""
from __future__ import annotations

import numpy as np

from .structures import (AS, BH, BH_BITS, DATA_PER_GROUP, DATA_START_BIT, DIND_START, EI,
                         FIRST_INDEX, GROUP_NO, I, INODES_PER_GROUP, J, JH, PAGE, PAGE_STRUCT, PG,
                         RADIX_HEIGHT, RAW, RAW_INODE, RECORD, RN, RR, RW_LOCK_BIAS, SPIN_FREE, T,
                         TSK, ZONE)


def _expect(condition, message):
    if not condition:
        raise RuntimeError(message)


class KernelCheck:
    """The Kernel's consistency check."""

    def _bh_of_block(self, block):
        return dict(self._meta)[block]

    def check(self):
        """The file system and the kernel's structures after the writes so far, checked
        against what the writes must have left (RuntimeError naming the first thing
        wrong); returns a dict of what was found."""
        n = self.written
        facts = {"records": n, "cached_pages": 0, "data_jh": 0}
        for k, f in enumerate(self.files):
            inode = f["inode"]
            size = (FIRST_INDEX + n) * PAGE
            got = self._read(inode + I["SIZE"], 8)
            _expect(got == size, f"CPU {k}'s file: i_size {got}, not {size}")
            got = self._read(inode + EI["DISKSIZE"], 8)
            _expect(got == size, f"CPU {k}'s file: i_disksize {got}, not {size}")
            got = self._read(inode + I["BLOCKS"])
            _expect(got == (FIRST_INDEX + n) * 8, f"CPU {k}'s file: i_blocks {got}")
            raw = self.itable + RAW_INODE * ((f["ino"] - 1) % INODES_PER_GROUP)
            raw_size = self._read(raw + RAW["SIZE"]) | self._read(raw + RAW["DIR_ACL"]) << 32
            _expect(raw_size == size, f"CPU {k}'s on-disk inode: size {raw_size}")
            self._check_blocks(k, f, n)
            self._check_mapping(k, f, facts)
        self._check_journal(facts)
        self._check_locks()
        return facts

    def _check_blocks(self, k, f, n):
        """The file's blocks: taken in its groups' bitmaps, and in its indirect blocks."""
        for j in range(self.groups_per_file):
            g = GROUP_NO + 1 + k * self.groups_per_file + j
            bits = np.unpackbits(np.frombuffer(self.machine.read(self.bitmaps[g], PAGE),
                                               np.uint8), bitorder="little")
            taken = int(bits[DATA_START_BIT:].sum())
            want = min(max(self.used_blocks + n - j * DATA_PER_GROUP, 0), DATA_PER_GROUP)
            _expect(taken == want and bits[DATA_START_BIT:DATA_START_BIT + want].all(),
                    f"CPU {k}'s group {g}: {taken} blocks taken, not the first {want}")
        dind = self._block_data(self._read(f["inode"] + EI["DIND"]))
        for offset in range(n):
            index = FIRST_INDEX + offset - DIND_START
            ind = self._block_data(self._read(dind + 4 * (index >> 10)))
            slot = self._read(ind + 4 * (index & 1023))
            _expect(slot == self.block_of(k, offset),
                    f"CPU {k}'s page {FIRST_INDEX + offset}: block {slot} in its "
                    f"indirect block, not {self.block_of(k, offset)}")

    def _block_data(self, block):
        return self._read(self._bh_of_block(block) + BH["DATA"])

    def _check_mapping(self, k, f, facts):
        """Every page of the file in the page cache: in the tree at its index, holding the
        record, its buffer mapped to its block."""
        mapping = f["mapping"]
        record = bytearray(self.machine.read(self.ctx[k]["buf"], RECORD))
        pages = 0
        for p in range(self.pool_pages):
            page = self.mem_map + PAGE_STRUCT * p
            if self._read(page + PG["MAPPING"]) != mapping:
                continue
            pages += 1
            index = self._read(page + PG["INDEX"])
            _expect(self._lookup(mapping, index) == page,
                    f"CPU {k}'s page {index} is not in its radix tree")
            frame = self.frames + PAGE * (p % self.frame_count)
            _expect(self.machine.read(frame, RECORD) == record,
                    f"CPU {k}'s page {index}: its bytes are not the record written")
            bh = self._read(page + PG["PRIVATE"])
            block = self.block_of(k, index - FIRST_INDEX)
            _expect(self._read(bh + BH["BLOCKNR"]) == block,
                    f"CPU {k}'s page {index}: its buffer maps block "
                    f"{self._read(bh + BH['BLOCKNR'])}, not {block}")
            if self._read(bh + BH["STATE"]) & (1 << BH_BITS["JBD"]):
                facts["data_jh"] += 1
        nrpages = self._read(mapping + AS["NRPAGES"])
        _expect(pages == nrpages, f"CPU {k}'s mapping: nrpages {nrpages}, {pages} found")
        facts["cached_pages"] += pages

    def _lookup(self, mapping, index):
        node = self._read(mapping + AS["PAGE_TREE"] + RR["RNODE"])
        for level in range(RADIX_HEIGHT - 1, -1, -1):
            if not node:
                return 0
            node = self._read(node + RN["SLOTS"] + 4 * ((index >> (6 * level)) & 63))
        return node

    def _transactions(self):
        """The transactions alive: the first (running, or committing once locked down) and
        the running one a journal_start made after the lock-down, if any."""
        running = self.running()
        return [self.transaction] + ([running] if running not in (0, self.transaction)
                                     else [])

    def _check_journal(self, facts):
        """The transactions' data lists hold exactly the data buffers with journal heads,
        each linked both ways and filed on the list it is on; no handle is open."""
        count = 0
        for t in self._transactions():
            head = self._read(t + T["SYNC_DATA"])
            jh = head
            while jh:
                count += 1
                nxt = self._read(jh + JH["TNEXT"])
                _expect(self._read(nxt + JH["TPREV"]) == jh, "t_sync_datalist: a broken link")
                _expect(self._read(jh + JH["TRANSACTION"]) == t, "a data buffer on the list "
                        "of a transaction it is not filed on")
                bh = self._read(jh + JH["BH"])
                _expect(self._read(bh + BH["PRIVATE"]) == jh, "a data journal_head's buffer "
                        "does not point back at it")
                jh = 0 if nxt == head else nxt
                _expect(count <= self.pool_pages, "t_sync_datalist does not close")
            _expect(self._read(t + T["UPDATES"]) == 0, "a handle is still open")
        _expect(count == facts["data_jh"], f"t_sync_datalist holds {count} buffers, "
                f"{facts['data_jh']} data buffers have journal heads")
        facts["sync_datalist"] = count
        facts["t_nr_buffers"] = sum(self._read(t + T["NR_BUFFERS"])
                                    for t in self._transactions())
        for task in [c["task"] for c in self.ctx] + self.pdflush:
            _expect(self._read(task + TSK["JOURNAL_INFO"]) == 0,
                    "current->journal_info is still set")

    def _check_locks(self):
        spins = {"j_state_lock": self.journal + J["STATE_LOCK"],
                 "j_list_lock": self.journal + J["LIST_LOCK"],
                 "lru_lock": self.zone + ZONE["LRU_LOCK"]}
        for t in self._transactions():
            spins[f"t_handle_lock of {t:#x}"] = t + T["HANDLE_LOCK"]
        for f in self.files:
            spins[f"i_lock of {f['ino']}"] = f["inode"] + I["LOCK"]
            spins[f"private_lock of {f['ino']}"] = f["mapping"] + AS["PRIVATE_LOCK"]
            _expect(self._read(f["mapping"] + AS["TREE_LOCK"]) == RW_LOCK_BIAS,
                    "a tree_lock is held")
            _expect(self._read(f["inode"] + I["SEM"]) == 1, "an i_sem is held")
        for name, address in spins.items():
            _expect(self._read(address, 1) == SPIN_FREE, f"{name} is held")
        for _, bh in self._meta:
            state = self._read(bh + BH["STATE"])
            held = state & ((1 << BH_BITS["State"]) | (1 << BH_BITS["JournalHead"]) |
                            (1 << BH_BITS["Lock"]))
            _expect(not held, f"a metadata buffer's bit lock is held (state {state:#x})")
