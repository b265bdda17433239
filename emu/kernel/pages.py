"""Physical pages (struct page and the page allocator, its frames in guest RAM), files and
the page cache that holds their pages."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import KernelError
from .layout import free_order
from .pgtable import PAGE_SHIFT, PAGE_SIZE


@dataclass(eq=False)
class Page:
    """struct page: where the frame is, who holds it, and PG_arch_1."""
    pfn: int
    count: int = 0            # references (page cache, mappings, the kernel)
    mapcount: int = 0         # PTEs mapping it
    arch_1: bool = False      # PG_arch_1: on PPC, "the I-cache is clean for this page"
    reserved: bool = False    # PageReserved (the zero page): never counted, never flushed
    kind: str = "free"        # anon, pagecache, pgtable, zero, arg
    mapping: object = None    # the File of a page-cache page
    index: int = 0            # its page index in the file

    @property
    def address(self):
        return self.pfn << PAGE_SHIFT


class PageAllocator:
    """Physical page frames in a region of guest RAM; a LIFO free list, like the per-CPU hot
    list (a page freed is the next one handed out). ``layout``: the free list's first order
    (emu.kernel.layout: 0 the lowest frame first)."""

    def __init__(self, machine, frames, layout=0):
        self.base = machine.alloc(frames * PAGE_SIZE)
        self.frames = frames
        self.pages = {}
        self.free_list = free_order([(self.base >> PAGE_SHIFT) + i for i in range(frames)],
                                    layout)

    def alloc(self, kind):
        if not self.free_list:
            raise MemoryError(f"the model's {self.frames} page frames are all in use")
        pfn = self.free_list.pop()
        page = Page(pfn, count=1, kind=kind)
        self.pages[pfn] = page
        return page

    def free(self, page):
        if page.reserved:
            return
        if page.pfn not in self.pages:
            raise KernelError(f"page frame {page.pfn:#x} freed twice")
        del self.pages[page.pfn]
        page.kind = "free"
        self.free_list.append(page.pfn)

    def page(self, pfn):
        return self.pages[pfn]

    @property
    def in_use(self):
        return len(self.pages)


# ------------------------------------------------------------------------ files

@dataclass(eq=False)
class File:
    """A file whose pages the page cache holds; its bytes are a deterministic pattern."""
    name: str
    pages: int

    def content(self, index):
        tag = f"{self.name}:{index}:".encode()
        return (tag * (PAGE_SIZE // len(tag) + 1))[:PAGE_SIZE]


class PageCache:
    """(file, index) -> Page; a page is read in on first use."""

    def __init__(self):
        self.pages = {}

    def __len__(self):
        return len(self.pages)

    def lookup(self, file, index):
        return self.pages.get((id(file), index))

    def add(self, file, index, page):
        self.pages[(id(file), index)] = page

    def remove(self, file, index):
        """remove_from_page_cache: the page at ``index`` of ``file`` leaves the cache (it
        is returned)."""
        return self.pages.pop((id(file), index))
