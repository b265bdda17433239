"""A regular file wholly in Linux 2.2.0's page cache, read by guest code (Dougan 1999's file
reread: LMBench 1.x's bw_file_rd; routines/ppc32/filemap_22.S).

``CachedFile(entry, size)`` lays out in guest RAM what 2.2.0's read path reads (davej-history
f6cce5dae), then loads filemap_22.S after ``entry``'s code and puts sys_lseek22 in the
system-call table (read(2) is pipe_22.S's sys_read22, which calls the file's f_op->read:
generic_file_read22):

* **mem_map**: a struct page (include/linux/mm.h 120-131: next, prev, inode, offset,
  next_hash, count, flags, wait, pprev_hash, buffers; 40 bytes) for every page frame of
  RAM, as free_area_init makes it; the variable ``mem_map`` (mm/memory.c) a word of its own.
* **page_hash_table**: PAGE_HASH_SIZE = 2048 chain heads (include/linux/pagemap.h 20-26;
  mm/filemap.c:34, a fixed array in 2.2.0: no page_cache_init sizes it by memory, as 2.4's
  does). The file's pages are put on their chains in file order, each at its chain's head
  (__add_page_to_hash_queue, pagemap.h 83-90), as the first read of the file put them.
* **the file's pages**: ``size`` bytes of page frames, each struct page naming the inode and
  its offset, count 1 (the page cache's reference), PG_uptodate | PG_referenced. Where the
  kernel's free-page allocator put them is not knowable; the model takes one contiguous
  block in file order. The choice cannot move a cache set: the profiles' L1 caches have 4
  KB a way (16 KB, 4 ways), so a line's set is its offset in the page, whatever the frame;
  the kernel reads the pages through BAT2 (no hash-table PTE groups; with ``bats=False``,
  not run for the chapter, the frames would set their HPTEs' groups); only which lines of
  mem_map their struct pages share follows from it (a sweep over 40-byte records either way).
  The chains hold the file's pages alone: a real system's other cached pages, added later,
  would sit before them on their chains (a longer walk), which the model does not have.
* **the inode** (the model's order of the fields the paths read, as emu.kernel.entry's pipe
  inode: i_flags, i_atime, i_sb there; i_dev, i_mode, i_size, i_state here), on a SCSI
  disk (major 8, whose driver registers no max_readahead: MAX_READAHEAD), dirty already
  (the previous pass's UPDATE_ATIME dirtied it; kupdate writes it back every few seconds,
  far longer than a pass), on a superblock mounted read-write with atimes.
* **the file** (the model's struct file: f_count .. f_dentry at entry.FILE_FIELDS' offsets,
  then f_reada, f_ramax, f_raend, f_ralen, f_rawin and f_version, in
  include/linux/fs.h's order) opened for reading, its f_op ext2_file_operations' llseek and
  read (fs/ext2/file.c 64-83).

Two estimates (``estimate_ranges``): sizeof(struct inode)'s lowest set bit, which divides the
inode's address in _page_hashfn (the struct's union of every filesystem's inode information
is not sized here), and the page offset of page_hash_table (a COMMON array of .bss).
"""
from __future__ import annotations

from ..context import routine
from ..hw import estimates
from .entry import FILE_FIELDS, FMODE_READ, HOST_REFUSED, NR_EXIT, NR_READ, TASK_FIELDS
from .pgtable import PAGE_SIZE

PAGE_SHIFT = 12
PAGE_HASH_BITS = 11                      # include/linux/pagemap.h:20
PAGE_HASH_SIZE = 1 << PAGE_HASH_BITS
#: struct page (include/linux/mm.h 120-131, 2.2.0): offsets of the fields, and its size
STRUCT_PAGE = {"PG_NEXT": 0, "PG_PREV": 4, "PG_INODE": 8, "PG_OFFSET": 12,
               "PG_NEXT_HASH": 16, "PG_COUNT": 20, "PG_FLAGS": 24, "PG_WAIT": 28,
               "PG_PPREV_HASH": 32, "PG_BUFFERS": 36}
STRUCT_PAGE_BYTES = 40
PG_REFERENCED, PG_UPTODATE = 2, 4        # include/linux/mm.h 135-139
#: the model's regular-file inode and file beyond entry.FILE_FIELDS (module notes)
INODE_FIELDS = {"I_DEV": 28, "I_MODE": 30, "I_SIZE": 32, "I_STATE": 36}
INODE_BYTES = 64
FILE_EXTRA = {"F_READA": 28, "F_RAMAX": 32, "F_RAEND": 36, "F_RALEN": 40, "F_RAWIN": 44,
              "F_VERSION": 48}
REGULAR_FILE_BYTES = 64
FOP_LSEEK = 0                            # struct file_operations: llseek, then read
S_FLAGS = 0                              # the model's superblock: s_flags
MAX_BLKDEV = 128                         # include/linux/major.h
SCSI_DISK_MAJOR, I_DIRTY, S_IFREG = 8, 1, 0o100644
NR_LSEEK = 19                            # include/asm-ppc/unistd.h
FD = 3                                   # the descriptor bw_file_rd's open() returns
PAGE_OFFSET = 0                          # the book's kernel lives at EA = physical

INODE_SHIFT = 2
INODE_SHIFT_RANGE = (2, 6, "sizeof(struct inode) of 2.2.0's PPC build is not derived (its "
                     "union u holds every filesystem's inode information): its lowest set "
                     "bit, which divides the inode's address in _page_hashfn, is a power of "
                     "two from 4 (the struct holds words) to 64; it moves which hash buckets "
                     "the file's pages use")
HASH_TABLE_OFFSET = 2048
HASH_TABLE_RANGE = (0, PAGE_SIZE - 32, "page_hash_table is COMMON in mm/filemap.o (.bss): "
                    "where ld put it in its page is not derived (no link map of 2.2.0)")


def estimate_ranges():
    """[(name, nominal, low, high, why)]: the page cache's estimates."""
    return [("kernel:pagecache.inode_size_shift", INODE_SHIFT, *INODE_SHIFT_RANGE),
            ("kernel:pagecache.hash_table_offset", HASH_TABLE_OFFSET, *HASH_TABLE_RANGE)]


def page_hashfn(inode, offset, shift):
    """_page_hashfn (include/linux/pagemap.h 34-44): s(i + o) & (PAGE_HASH_SIZE - 1), i the
    inode's address over sizeof(struct inode)'s lowest set bit (1 << ``shift``), o the
    page index, s(x) = x + (x >> PAGE_HASH_BITS)."""
    x = (inode >> shift) + (offset >> PAGE_SHIFT)
    return (x + (x >> PAGE_HASH_BITS)) & (PAGE_HASH_SIZE - 1)


class CachedFile:
    """``size`` bytes of a file in the page cache of ``entry``'s kernel (module notes):
    ``file`` is its struct file, for ``entry.install``."""

    def __init__(self, entry, size):
        if entry.version != "2.2.0":
            raise ValueError("the page-cache read path is 2.2.0's (filemap_22.S)")
        if size % PAGE_SIZE:
            raise ValueError("the file's size must be whole pages")
        self.entry, self.machine, self.size = entry, entry.machine, size
        m = self.machine
        self.shift = int(estimates.value("kernel:pagecache.inode_size_shift", INODE_SHIFT))
        offset = int(estimates.value("kernel:pagecache.hash_table_offset", HASH_TABLE_OFFSET))
        self.mem_map = m.alloc(STRUCT_PAGE_BYTES * (m.ram_size >> PAGE_SHIFT), align=PAGE_SIZE)
        self.mem_map_var = m.alloc(4, align=32)
        self._word(self.mem_map_var, self.mem_map)
        self.hash_table = m.alloc(4 * PAGE_HASH_SIZE + offset, align=PAGE_SIZE) + offset // 32 * 32
        self.max_readahead = m.alloc(4 * MAX_BLKDEV, align=32)     # every entry NULL
        self.superblock = m.alloc(32, align=32)
        self.inode = self._inode()
        self.pages = m.alloc(size, align=PAGE_SIZE)
        for index in range(size // PAGE_SIZE):
            self._add_to_page_cache(self.pages + index * PAGE_SIZE, index * PAGE_SIZE)
        self.file = self._file()
        self._load()

    def _word(self, address, value):
        self.machine.write(address, (value & 0xFFFFFFFF).to_bytes(4, "big"))

    def _inode(self):
        m, f = self.machine, {**FILE_FIELDS, **INODE_FIELDS}
        inode = m.alloc(INODE_BYTES, align=32)
        m.write(inode + f["I_DEV"], ((SCSI_DISK_MAJOR << 8) | 1).to_bytes(2, "big"))
        m.write(inode + f["I_MODE"], S_IFREG.to_bytes(2, "big"))
        self._word(inode + f["I_SIZE"], self.size)
        self._word(inode + f["I_STATE"], I_DIRTY)
        self._word(inode + f["I_SB"], self.superblock)
        return inode

    def struct_page(self, address):
        """The struct page of the frame at physical ``address`` (mem_map + MAP_NR)."""
        return self.mem_map + STRUCT_PAGE_BYTES * (address >> PAGE_SHIFT)

    def bucket(self, offset):
        """The page_hash_table slot of the file's page at ``offset``."""
        return self.hash_table + 4 * page_hashfn(self.inode, offset, self.shift)

    def _add_to_page_cache(self, frame, offset):
        """add_to_page_cache's effect: the struct page names the inode and offset, holds
        the cache's reference, is up to date, and heads its hash chain."""
        p, s = self.struct_page(frame), STRUCT_PAGE
        slot = self.bucket(offset)
        head = self.machine.read_word(slot)
        self._word(p + s["PG_INODE"], self.inode)
        self._word(p + s["PG_OFFSET"], offset)
        self._word(p + s["PG_COUNT"], 1)
        self._word(p + s["PG_FLAGS"], (1 << PG_UPTODATE) | (1 << PG_REFERENCED))
        self._word(p + s["PG_NEXT_HASH"], head)
        if head:
            self._word(head + s["PG_PPREV_HASH"], p + s["PG_NEXT_HASH"])
        self._word(slot, p)
        self._word(p + s["PG_PPREV_HASH"], slot)

    def chain_depth(self, offset):
        """Where the page at ``offset`` sits on its hash chain (1: at its head)."""
        page, depth = self.machine.read_word(self.bucket(offset)), 1
        while self.machine.read_word(page + STRUCT_PAGE["PG_OFFSET"]) != offset:
            page, depth = self.machine.read_word(page + STRUCT_PAGE["PG_NEXT_HASH"]), depth + 1
        return depth

    def _file(self):
        m, f = self.machine, {**FILE_FIELDS, **FILE_EXTRA}
        dentry = m.alloc(16, align=16)
        self._word(dentry + f["D_INODE"], self.inode)
        self.ops = m.alloc(16, align=16)
        file = m.alloc(REGULAR_FILE_BYTES, align=32)
        self._word(file + f["F_MODE"], FMODE_READ)
        self._word(file + f["F_DENTRY"], dentry)
        self._word(file + f["F_OP"], self.ops)
        return file

    def _load(self):
        """filemap_22.S after the entry's code, its f_op table and sys_lseek22's slot."""
        m, e = self.machine, self.entry
        equs = {**TASK_FIELDS, **FILE_FIELDS, **FILE_EXTRA, **INODE_FIELDS, **STRUCT_PAGE,
                "FOP_LSEEK": FOP_LSEEK, "S_FLAGS": S_FLAGS, "HOST_REFUSED": HOST_REFUSED,
                "HOST_STOP22": m.symbols["host_stop22"], "INODE_SHIFT": self.shift,
                "COPY_TOFROM_USER22": m.symbols["__copy_tofrom_user22"],
                "PAGE_HASH_TABLE": self.hash_table, "MEM_MAP_VAR": self.mem_map_var,
                "MAX_READAHEAD_TABLE": self.max_readahead, "PAGE_OFFSET": PAGE_OFFSET,
                "KDATA_XTIME": e.kdata["XTIME"], "KDATA_EVENT": e.kdata["EVENT"]}
        prelude = "".join(f".equ {k}, {v:#x}\n" for k, v in equs.items())
        m.load(prelude + routine("ppc32/filemap_22.S").read_text())
        self._word(self.ops + FOP_LSEEK, m.symbols["ext2_file_lseek22"])
        self._word(self.ops + FILE_FIELDS["FOP_READ"], m.symbols["generic_file_read22"])
        self._word(e.table + 4 * NR_LSEEK, m.symbols["sys_lseek22"])


# LMBench 1.x bw_file_rd (src/bw_file_rd.c 1.8-1.9, SCCS serials 9-10, 96/11-97/04): in
# BENCH's loop, lseek(fd, 0, 0), then doit(): while size > 0, n = read(fd, buf, XFERSIZE)
# (a short read ends it), the buffer summed 128 ints an iteration (sum += p[0] + ... +
# p[127], left to right as C adds them, p += 128 while p <= lastone), size -= n
XFERSIZE = 64 << 10
MINSZ = 4 * 128


def _sum_block():
    """One iteration of doit's sum: p[0] + p[1] + ... + p[127] left to right, then sum +=."""
    lines = ["        lwz     r9, 0(r27)", "        lwz     r0, 4(r27)",
             "        add     r9, r9, r0"]
    for k in range(2, 128):
        lines += [f"        lwz     r0, {4 * k}(r27)", "        add     r9, r9, r0"]
    return "\n".join(lines + ["        add     r31, r31, r9"])


def bw_file_rd(buffer):
    """bw_file_rd's loop on the file at descriptor FD, its 64 KB buffer at ``buffer``: r4
    passes (BENCH's N) over the file's first r3 bytes (its count, a multiple of 64 KB),
    each lseek, then the reads and sums; then exit(0)."""
    last = buffer + XFERSIZE - MINSZ
    return f"""
_start:
        mr      r25, r3                 # count
        mr      r30, r4                 # N passes
        li      r31, 0                  # sum
        cmpwi   0, r30, 0               # BENCH's for (i = 0; i < N; ++i): none if N is 0
        ble     done
pass:
        li      r3, {FD}                # lseek(fd, 0, 0)
        li      r4, 0
        li      r5, 0
        bl      lseek
        mr      r29, r25                # size = count
read_loop:
        li      r3, {FD}                # n = read(fd, buf, xfersize)
        lis     r4, {buffer >> 16:#x}
        lis     r5, {XFERSIZE >> 16:#x}
        bl      read
        lis     r0, {XFERSIZE >> 16:#x}
        cmpw    0, r3, r0               # n < xfersize: done
        blt     pass_done
        mr      r28, r3
        lis     r27, {buffer >> 16:#x}  # p = buf
        lis     r26, {last >> 16:#x}    # lastone
        ori     r26, r26, {last & 0xFFFF:#x}
sum_loop:
{_sum_block()}
        addi    r27, r27, 512           # p += 128
        cmplw   0, r27, r26
        ble     sum_loop
        subf.   r29, r28, r29           # size -= n; while (size > 0)
        bgt     read_loop
pass_done:
        addic.  r30, r30, -1
        bne     pass
done:
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
lseek:
        li      r0, {NR_LSEEK}
        sc
        bnslr
        li      r3, -1
        blr
read:
        li      r0, {NR_READ}
        sc
        bnslr
        li      r3, -1
        blr
"""
