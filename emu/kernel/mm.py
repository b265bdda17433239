"""Address spaces: VMAs (vm_area_struct), the mm_struct whose page tables live in guest RAM,
and processes."""
from __future__ import annotations

from dataclasses import dataclass, field

from .pgtable import (PAGE_SHIFT, TASK_SIZE, TASK_UNMAPPED_BASE, VM_EXEC, VM_READ, VM_SHARED,
                      VM_WRITE)
from .errors import KernelError
from .pages import File


@dataclass(eq=False)
class VMA:
    """vm_area_struct: [start, end), flags, and the file + page offset (None: anonymous)."""
    start: int
    end: int
    flags: int
    file: File | None = None
    pgoff: int = 0
    name: str = ""
    #: vma->anon_vma is set (2.6.36: anon_vma_prepare at the area's first anonymous page or
    #: copy-on-write, anon_vma_fork for a child's area, anon_vma_clone for a split's halves);
    #: Arch.copy_needs_anon_vma makes fork skip an area without one
    anon_vma: bool = False

    @property
    def shared(self):
        return bool(self.flags & VM_SHARED)

    def file_index(self, address):
        return self.pgoff + ((address - self.start) >> PAGE_SHIFT)

    def __repr__(self):
        prot = "".join(ch if self.flags & bit else "-" for ch, bit in
                       (("r", VM_READ), ("w", VM_WRITE), ("x", VM_EXEC)))
        prot += "s" if self.shared else "p"
        return f"VMA({self.start:#010x}-{self.end:#010x} {prot} {self.name})"


class MM:
    """mm_struct: the VMAs, the pgd page in guest RAM, and the MMU context (VSIDs)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.vmas: list[VMA] = []
        self.pgd = kernel.arch.pgd_alloc(kernel)
        self.context = kernel.arch.new_context()
        self.users = 1
        self.page_table_lock = kernel.lock_word()     # 0 on one CPU: no locks

    def find_vma(self, address):
        for vma in self.vmas:
            if vma.start <= address < vma.end:
                return vma
        return None

    def insert_vma(self, vma):
        for other in self.vmas:
            if vma.start < other.end and other.start < vma.end:
                raise KernelError(f"{vma} overlaps {other}")
        self.vmas.append(vma)
        self.vmas.sort(key=lambda v: v.start)

    def get_unmapped_area(self, length, base=TASK_UNMAPPED_BASE):
        """First fit from TASK_UNMAPPED_BASE up (2.6's bottom-up arch_get_unmapped_area)."""
        address = base
        for vma in self.vmas:
            if vma.end <= address:
                continue
            if address + length <= vma.start:
                break
            address = max(address, vma.end)
        if address + length > TASK_SIZE:
            raise KernelError(f"no room for {length:#x} bytes below TASK_SIZE")
        return address

    # -- the page table in guest memory, shaped by the backend (Arch.table_levels)
    def pte_page(self, address):
        """Physical address of the PTE page covering ``address`` (0: none): down the
        directory levels from the pgd."""
        kernel = self.kernel
        arch, read = kernel.arch, kernel.machine.read_word
        slot, down = arch.dir_slot, arch.dir_table        # looked up once: a hot path
        table = self.pgd.address
        for depth in range(len(arch.table_levels)):
            entry = read(slot(depth, table, address))
            if not entry:
                return 0
            table = down(depth, entry)
        return table

    def ptep(self, address):
        """Address of the Linux PTE for ``address``, or None if there is no PTE page."""
        table = self.pte_page(address)
        if not table:
            return None
        return table + self.kernel.arch.pte_offset(address)

    def pte(self, address):
        """The Linux PTE value for ``address`` (0 if none), in this module's bits."""
        ptep = self.ptep(address)
        return self.kernel.arch.read_pte(ptep) if ptep else 0


@dataclass(eq=False)
class Process:
    pid: int
    name: str
    mm: MM
    parent: "Process | None" = None
    children: list = field(default_factory=list)
    exited: bool = False

    def __repr__(self):
        return f"Process({self.pid}, {self.name!r})"
