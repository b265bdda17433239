"""The files_cache slab: where a forked process's files table (struct files_struct) lies.

Linux 2.1.51 and 2.2.0 take a new process's files table from a slab cache of its own
(kernel/fork.c copy_files: ``kmem_cache_alloc(files_cachep, SLAB_KERNEL)``; the cache made
by filescache_init with SLAB_HWCACHE_ALIGN: 94520e420 lines 343 and 511, f6cce5dae lines
419 and 663 of schwabe/davej-history), not beside the task union. The slab's geometry is
what mm/slab.c's kmem_cache_create computes for each kernel's struct (L1_CACHE_BYTES 32),
and kmem_cache_grow colours each new slab: its first object lies ``c_colour_next *
c_align`` bytes in, c_colour_next counting down from c_colour to 0 and starting over.

* 2.2.0: the struct is 268 bytes (count, max_fds, the fd pointer, two 128-byte fd_sets);
  with its 4-byte on-slab bufctl and cache-aligned, 288. A one-page slab with its 32-byte
  header on-slab holds 14 objects and leaves 32 bytes: one colour of 32. The fd array is
  a page of its own (copy_files: NR_OPEN 1024 pointers fill a page, __get_free_page).
* 2.1.51: the struct is 4,356 bytes, fd[NR_OPEN] inline at byte 260; with its bufctl and
  aligned, 4,384. Off-slab at first (over PAGE_SIZE / 8); an order-3 (32 KB) slab of 7
  objects leaves 2,080 bytes, enough to move the 32-byte header on-slab (2,048 left): 32
  colours of 64 bytes (the alignment doubles at 8 colours or more).

The object a process gets depends on what the system allocated before it (every process
since boot that did not share its parent's table): an estimate, ``kernel:files_cache.
first_object``, the LMBench parent's object in the first slab (its child's the next).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hw import estimates
from .pgtable import PAGE_SIZE


@dataclass(frozen=True)
class SlabGeometry:
    block: int                 # bytes of a slab (PAGE_SIZE << c_gfporder)
    stride: int                # an object and its bufctl, cache-aligned
    objects: int               # c_num
    colours: int               # c_colour
    align: int                 # c_align: bytes a colour
    fd_array: int | None       # the fd array's offset in the struct, None: a page of its own


GEOMETRY = {"2.2.0": SlabGeometry(PAGE_SIZE, 288, 14, 1, 32, None),
            "2.1.51": SlabGeometry(8 * PAGE_SIZE, 4384, 7, 32, 64, 260)}
FIRST_OBJECT = 0
FIRST_OBJECT_RANGE = (0, 5, "the objects the system took from files_cache before the "
                      "benchmark (processes since boot that did not share a table) set "
                      "which one the parent gets: any of a slab's (2.1.51's slab holds 7)")


def estimate_ranges():
    """[(name, nominal, low, high, why)]: the files tables' placement."""
    return [("kernel:files_cache.first_object", FIRST_OBJECT, *FIRST_OBJECT_RANGE)]


class FilesCache:
    """The files_cache of one kernel ``version`` on ``machine``: ``alloc()`` gives the next
    object's address, ``fd_array(files)`` where its descriptors lie."""

    def __init__(self, machine, version):
        self.machine, self.geometry = machine, GEOMETRY[version]
        self.colour_next = self.geometry.colours
        self.slab, self.used = None, 0
        self.skip = int(estimates.value("kernel:files_cache.first_object", FIRST_OBJECT))

    def _grow(self):
        """kmem_cache_grow: a new slab, its objects from this slab's colour on."""
        g = self.geometry
        offset = self.colour_next * g.align
        self.colour_next = g.colours if self.colour_next == 0 else self.colour_next - 1
        self.slab = self.machine.alloc(g.block, align=g.block) + offset
        self.used = 0

    def alloc(self):
        """kmem_cache_alloc: the next free object (the first ``skip`` taken before)."""
        while True:
            if self.slab is None or self.used == self.geometry.objects:
                self._grow()
            address = self.slab + self.geometry.stride * self.used
            self.used += 1
            if self.skip == 0:
                return address
            self.skip -= 1

    def fd_array(self, files):
        """The fd array of the table at ``files``: inline (2.1.51) or a page (2.2.0)."""
        offset = self.geometry.fd_array
        if offset is not None:
            return files + offset
        return self.machine.alloc(PAGE_SIZE, align=PAGE_SIZE)
