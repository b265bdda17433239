"""Prefill: the file system as a long run leaves it (pages, buffers, journal heads, the slab
caches' state), written into guest memory without running the writes.
"""
from __future__ import annotations

import numpy as np

from .structures import (AC, AS, BH_BITS, BH_SIZE, BJ, BLOCKS_PER_GROUP, DIND_START, EI, F,
                         FBC_BATCH, FIRST_INDEX, GD, GROUP_NO, I, INODES_PER_GROUP, JH, JH_SIZE, KC,
                         PAGE, PAGE_STRUCT, PCPU, PG, PG_BITS, PS, RADIX_NODE, RAW, RAW_INODE,
                         RECORD, RN, RR, SB, T, ZONE, _words, slab_limits)


class KernelPrefill:
    """The Kernel's prefill: a long run's state without running it."""

    def prefill(self, records=None, clean_before=0, committed_before=0):
        """Put the page cache in the state ``records`` writes per CPU leave on a fresh
        Kernel (default: enough to fill the zone), without running them; each CPU's first
        ``clean_before`` pages as writeback leaves them (clean: no dirty bit on the page or
        its buffer, no dirty tag), the rest dirty; each CPU's first ``committed_before``
        pages as a commit leaves them (clean, their buffers off the data list, without a
        journal head: their heads are in the slab lists, oldest first). Without running them: the pages (taken
        from the zone 16 at a time into each CPU's list and used last-first, as
        rmqueue_bulk and buffered_rmqueue hand them out), their buffer and journal heads
        (the slabs' next objects), the radix trees with their dirty tags, the inactive
        list, the transaction's data list, the blocks in the bitmaps and the indirect
        blocks, the inode's size. The metadata buffers' journal state is left to the
        first real write. The caches see none of it: they start empty. A test compares
        the result with real writes."""
        zone_pages = self.pool_pages // self.cpus
        records = zone_pages if records is None else records
        if self.written:
            raise ValueError("prefill works on a fresh Kernel only")
        if records % 16 or not 0 < records <= zone_pages:
            raise ValueError(f"records must be a multiple of 16 from 16 to {zone_pages}")
        if not 0 <= clean_before <= records:
            raise ValueError(f"clean_before must be from 0 to the records ({records})")
        if not 0 <= committed_before <= clean_before:
            raise ValueError(f"committed_before must be from 0 to clean_before ({clean_before})")
        self._check_room(records)
        record = bytearray(self.machine.read(self.ctx[0]["buf"], RECORD))
        record[:4] = (0x5A5A5A5A).to_bytes(4, "little")          # fill_buffer's word
        for c in self.ctx:
            self._poke(c["buf"], record)
        self._poke(self.frames, bytes(record) * self.frame_count)
        order = self._prefill_pages(records)
        self._prefill_structures(order, records, clean_before, committed_before)
        self.written = records

    def _prefill_pages(self, records):
        """(CPU, offset, page slot) in the order the writes would take them: round-robin
        over the CPUs, each refilling its list 16 pages at a time from the zone."""
        next_free, order, stack = 0, [], [[] for _ in range(self.cpus)]
        for offset in range(records):
            for k in range(self.cpus):
                if not stack[k]:
                    stack[k] = list(range(next_free, next_free + 16))
                    next_free += 16
                order.append((k, offset, stack[k].pop()))
        self._word(self.zone + ZONE["FREE_NEXT"], self.mem_map + PAGE_STRUCT * next_free)
        self._word(self.zone + ZONE["FREE_LEFT"], self.pool_pages - next_free)
        return order

    def _prefill_structures(self, order, records, clean_before=0, committed_before=0):
        """The pages, buffer heads and journal heads of ``order`` (built as arrays and
        written at once), the inactive list, the transaction's data list, the trees."""
        m = self.machine
        arrays = {name: [self._read(self.caches[name] + KC["ARRAY"] + 4 * k)
                         for k in range(self.cpus)]
                  for name in ("bh_cachep", "journal_head_cache", "radix_tree_node_cachep")}
        ring = {name: np.array([self._read(ac + AC["NEXT"]) for ac in acs], np.int64)
                for name, acs in arrays.items()}
        cpu = np.array([k for k, _, _ in order], np.int64)
        offset = np.array([o for _, o, _ in order], np.int64)
        slot = np.array([p for _, _, p in order], np.int64)
        page = self.mem_map + PAGE_STRUCT * slot
        bh = ring["bh_cachep"][cpu] + BH_SIZE * offset
        jh = ring["journal_head_cache"][cpu] + JH_SIZE * offset
        mapping = np.array([f["mapping"] for f in self.files], np.int64)[cpu]
        block = np.array([self.block_of(k, o) for k, o, _ in order], np.int64)
        head = self.zone + ZONE["INACTIVE"]
        lru = page + PG["LRU_NEXT"]
        # list_add at the head, oldest first: each page's next is the one before it
        older = np.concatenate(([head], lru[:-1]))
        newer = np.concatenate((lru[1:], [head]))
        dirty = offset >= clean_before
        flags = sum(1 << PG_BITS[b] for b in ("uptodate", "lru", "referenced", "private"))
        flags = flags + dirty * (1 << PG_BITS["dirty"])
        pages = np.zeros((self.pool_pages, 8), np.uint32)
        pages[slot] = np.stack([flags, np.full_like(slot, 2),
                                np.zeros_like(slot), bh, mapping, FIRST_INDEX + offset,
                                older, newer], axis=1)
        used = int(slot.max()) + 1
        m.write(self.mem_map, pages[:used].tobytes())
        self._poke(head, _words(int(lru[-1]), int(lru[0])))
        self._word(self.zone + ZONE["NR_INACTIVE"], len(order))
        filed = offset >= committed_before     # on the data list, with a journal head
        state = sum(1 << BH_BITS[b] for b in ("Uptodate", "Mapped"))
        state = state + dirty * (1 << BH_BITS["Dirty"]) + filed * (1 << BH_BITS["JBD"])
        n = len(order)
        bhs = np.stack([state, bh, page, filed, np.full(n, PAGE), block,
                        np.zeros(n), np.full(n, self.bdev), np.zeros(n), jh * filed,
                        np.zeros(n), np.zeros(n)], axis=1).astype(np.int64).astype(np.uint32)
        t = self.transaction
        listed = jh[filed]                              # the data list, in write order
        jhs = np.zeros((n, JH_SIZE // 4), np.uint32)
        word = {field: offset // 4 for field, offset in JH.items()}
        jhs[filed, word["BH"]], jhs[filed, word["JLIST"]] = bh[filed], BJ["SYNCDATA"]
        jhs[filed, word["TRANSACTION"]] = t
        jhs[filed, word["TNEXT"]] = np.roll(listed, -1)
        jhs[filed, word["TPREV"]] = np.roll(listed, 1)
        for k in range(self.cpus):                       # each CPU's objects are contiguous
            mine = np.flatnonzero(cpu == k)
            m.write(int(bh[mine[0]]), bhs[mine].tobytes())
            m.write(int(jh[mine[0]]), jhs[mine].tobytes())
            for name, size in (("bh_cachep", BH_SIZE), ("journal_head_cache", JH_SIZE)):
                self._slab_taken(arrays[name][k], size, records)
        self._word(t + T["SYNC_DATA"], int(listed[0]) if len(listed) else 0)
        self._slab_given_back("journal_head_cache", jh[~filed])
        for k, f in enumerate(self.files):
            mine = np.flatnonzero(cpu == k)
            nodes = self._radix_fill(f["mapping"], FIRST_INDEX + offset[mine], page[mine],
                                     int(ring["radix_tree_node_cachep"][k]), dirty[mine])
            start = int(ring["radix_tree_node_cachep"][k])
            self._slab_taken(arrays["radix_tree_node_cachep"][k], RADIX_NODE,
                             (nodes - start) // RADIX_NODE)
            dind = self._block_data(self._read(f["inode"] + EI["DIND"]))
            index = FIRST_INDEX + offset[mine] - DIND_START
            for j in np.unique(index >> 10):
                ind = self._block_data(self._read(dind + 4 * int(j)))
                here = index >> 10 == j
                words = np.frombuffer(m.read(ind, PAGE), np.uint32).copy()
                words[index[here] & 1023] = block[mine][here]
                m.write(ind, words.tobytes())
        self._prefill_files(records, clean_before)

    def _slab_given_back(self, name, objects):
        """The slab lists of cache ``name`` hold ``objects`` (freed, oldest first), as the
        commit that unfiled them gave them back: through its CPU's array, whose full array
        passes them on (cache_flusharray); the stand-in's FIFO takes them in order."""
        cache = self.caches[name]
        base = self._read(cache + KC["FREE_BASE"])
        if 4 * len(objects) > self._read(cache + KC["FREE_END"]) - base:
            raise ValueError(f"{name}: more freed objects than its slab lists hold")
        self._poke(base, _words(*[int(o) for o in objects]))
        self._poke(cache + KC["FREE_HEAD"], _words(base, base + 4 * len(objects),
                                                   len(objects)))

    def _slab_taken(self, ac, objsize, count):
        """Leave the per-CPU array ``ac`` (of a cache of ``objsize`` bytes, nothing freed
        yet) as ``count`` allocations leave it: each empty array grew the cache by a batch
        (BATCHREFILL_LIMIT 16 while untouched, then batchcount: kmem_cache_alloc in
        mm_2612.S), handed out in address order; what is left of the last batch stays in
        the array."""
        if count == 0:
            return
        _, batch, _ = slab_limits(objsize)
        taken, size = 0, min(batch, 16)
        while taken < count:
            taken, size = taken + size, batch
        start = self._read(ac + AC["START"])
        left = taken - count
        self._poke(ac + AC["AVAIL"], _words(left))
        self._word(ac + AC["NEXT"], start + objsize * taken)
        self._word(ac + AC["TOUCHED"], 1)
        self._poke(ac + AC["ENTRY"], _words(*[start + objsize * (taken - 1 - i)
                                              for i in range(left)]))

    def _radix_fill(self, mapping, indices, pages, node_next, dirty):
        """radix_tree_insert of each (index, page) in order, with the dirty tag where
        ``dirty`` says: the nodes below the fixed level-3 node come from the radix node
        slab's memory at ``node_next``, in the order insertion takes them; returns where
        they end."""
        m = self.machine
        top = self._read(mapping + AS["PAGE_TREE"] + RR["RNODE"])
        level3 = self._read(top + RN["SLOTS"] + 4 * ((int(indices[0]) >> 18) & 63))
        nodes = {}                                      # address -> (count, slots, tags)

        def node(address):
            if address not in nodes:
                words = np.frombuffer(m.read(address, RADIX_NODE), np.uint32).copy()
                nodes[address] = words
            return nodes[address]

        def tag(words, offset):
            words[(RN["TAGS"] >> 2) + (offset >> 5)] |= np.uint32(1 << (offset & 31))

        for index, page, tagged in zip(indices.tolist(), pages.tolist(), dirty.tolist()):
            path = [top, level3]
            parent = level3
            for shift in (12, 6):
                words = node(parent)
                offset = (index >> shift) & 63
                child = int(words[1 + offset])
                if not child:
                    child, node_next = node_next, node_next + RADIX_NODE
                    words[1 + offset] = child
                    words[0] += 1
                    node(child)
                path.append(child)
                parent = child
            leaf = node(parent)
            leaf[1 + (index & 63)] = page
            leaf[0] += 1
            for level, address in zip((3, 2, 1, 0), path):
                if tagged:
                    tag(node(address), (index >> (6 * level)) & 63)
        for address, words in nodes.items():
            m.write(address, words.tobytes())
        return node_next

    def _prefill_files(self, records, clean_before=0):
        """Each file's size, blocks, allocation goal, on-disk inode, page count; the
        groups' bitmaps and free counts; the free blocks counter; per-CPU counts."""
        for k, f in enumerate(self.files):
            inode = f["inode"]
            size = (FIRST_INDEX + records) * PAGE
            self._poke(inode + EI["LAST_ALLOC_LOGICAL"],
                       _words(FIRST_INDEX + records - 1, self.block_of(k, records - 1)))
            self._poke(inode + EI["DISKSIZE"], _words(size, size >> 32))
            self._poke(inode + I["SIZE"], _words(size, size >> 32))
            self._word(inode + I["BLOCKS"], (FIRST_INDEX + records) * 8)
            raw = self.itable + RAW_INODE * ((f["ino"] - 1) % INODES_PER_GROUP)
            self._word(raw + RAW["SIZE"], size)
            self._word(raw + RAW["DIR_ACL"], size >> 32)
            self._word(f["mapping"] + AS["NRPAGES"], records)
            self._poke(f["file"] + F["POS"], _words(size, size >> 32))
            blocks = np.array([self.block_of(k, o) for o in range(records)], np.int64)
            for g in range(GROUP_NO + 1 + k * self.groups_per_file,
                           GROUP_NO + 1 + (k + 1) * self.groups_per_file):
                bits = np.unpackbits(np.frombuffer(self.machine.read(self.bitmaps[g], PAGE),
                                                   np.uint8), bitorder="little").copy()
                here = blocks[blocks // BLOCKS_PER_GROUP == g] % BLOCKS_PER_GROUP
                bits[here] = 1
                self._poke(self.bitmaps[g], np.packbits(bits, bitorder="little").tobytes())
                desc = self._block_data(self.gd_block) + 32 * (g & 127) + GD["FREE_BLOCKS"]
                self._poke(desc, int(BLOCKS_PER_GROUP - bits.sum()).to_bytes(2, "little"))
            pcpu = self.pcpu[k]
            self._word(pcpu + PCPU["FBC_COUNT"], -(records % FBC_BATCH))
            self._word(pcpu + PCPU["BH_NR"], records)
            self._word(pcpu + PCPU["RATELIMITS"], records % (self.ratelimit + 1))
            self._word(pcpu + PCPU["PAGE_STATE"] + PS["NR_DIRTY"], records - clean_before)
        folded = self.cpus * (records // FBC_BATCH) * FBC_BATCH
        self._word(self.sb + SB["FREE_COUNT"], 10_000_000 - folded)
