"""The Linux page-table and VMA constants the model speaks: the page size, the user address
space of PPC32 Linux 2.6, PPC32's Linux PTE bits (a backend whose kernel uses other bits
translates when it reads and writes a PTE: ``Arch.read_pte`` / ``write_pte``) and the VMA
flags of include/linux/mm.h."""

PAGE_SIZE = 4096
PAGE_SHIFT = 12
PTRS_PER_PTE = 1024
PGDIR_SHIFT = 22                       # one pgd entry (one PTE page) maps 4 MB
TASK_SIZE = 0x80000000                 # PPC32 default user address-space size (2.6)
TASK_UNMAPPED_BASE = TASK_SIZE // 8 * 3    # where mmap looks first (include/asm-ppc)
STACK_TOP = TASK_SIZE

# Linux PTE bits of the "classic" hashed 32-bit PowerPC (include/asm-ppc/pgtable.h,
# CONFIG_6xx, Linux 2.6; include/asm-powerpc/pte-hash32.h later)
_PAGE_PRESENT = 0x001     # software: the PTE holds a translation
_PAGE_HASHPTE = 0x002     # hash_page has made an HPTE for this PTE
_PAGE_USER = 0x004        # user access allowed
_PAGE_GUARDED = 0x008     # G
_PAGE_COHERENT = 0x010    # M
_PAGE_NO_CACHE = 0x020    # I
_PAGE_WRITETHRU = 0x040   # W
_PAGE_DIRTY = 0x080       # C: changed
_PAGE_ACCESSED = 0x100    # R: referenced
_PAGE_EXEC = 0x200        # software: exec allowed (used by the exec-fault flush policy)
_PAGE_RW = 0x400          # software: user write allowed
_PAGE_BASE = _PAGE_PRESENT | _PAGE_ACCESSED     # mk_pte's base: new PTEs are young
PTE_PFN_MASK = 0xFFFFF000

# VMA flags (include/linux/mm.h)
VM_READ, VM_WRITE, VM_EXEC, VM_SHARED = 0x1, 0x2, 0x4, 0x8
VM_GROWSDOWN = 0x100
PROT = {"r": VM_READ, "w": VM_WRITE, "x": VM_EXEC}


def with_hashpte(old, value):
    """The PTE ``value`` with the old PTE's _PAGE_HASHPTE kept: set_pte leaves it, since an
    HPTE made for the old one may still exist."""
    return (old & _PAGE_HASHPTE) | (value & ~_PAGE_HASHPTE)
