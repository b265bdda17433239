"""The guest kernel's configuration: which of 2.6.12's options the routines are built with,
and why. The mail (the seed's message) gives no .config, so each is a choice, stated here.

* CONFIG_PREEMPT: an estimate (``PREEMPT``), 0 (off) nominal, the routines following either
  value (the equate CONFIG_PREEMPT in front of them: routines/x86/spinlock_2612.S's lock
  functions and preempt_disable/preempt_enable macros, the bit spin locks' inline users,
  kunmap_atomic's preempt_check_resched, ret_from_intr's resume_kernel).
* CONFIG_HIGHMEM (4G): followed (``ext3model.HIGHMEM``, pacing.py): the machine's memory the
  model takes (``MEMORY_MB``, 1-16 GB) is reachable only with it. 2.6.12.1's own
  arch/i386/defconfig (114) is CONFIG_NOHIGHMEM=y, which uses at most 896 MB: a small
  default, not a server's; the server distributions' i386 kernels of the time used the
  first 4 GB at least (Red Hat Enterprise Linux 3's System Administration Guide, "kernel":
  "only the first 4 GB of RAM is used", a hugemem kernel for more).
* CONFIG_LBD (64-bit sector_t): not followed: sector_t is 4 bytes in the structures
  (structures.py: buffer_head's b_blocknr, bio's bi_sector, the request's sectors), as
  without CONFIG_LBD. The defconfig (254) has CONFIG_LBD=y; its help (drivers/block/Kconfig
  463-469) says to turn it on for discs or RAID/loop devices larger than 2 TB, "Otherwise
  say N", and the mail's four 8000 MB files need no such device. With it, the block
  numbers would be 8 bytes in buffer_head, bio and request (the fields after them moving
  4 bytes, buffer_head growing), which the model does not lay out.
* CONFIG_SMP: followed (the mail's four CPUs), as the defconfig (94); no spinlock
  debugging (CONFIG_DEBUG_SPINLOCK, off in the defconfig).
"""
from __future__ import annotations

from ....hw import estimates

#: CONFIG_PREEMPT: is the mail's kernel preemptible (include/linux/preempt.h: preempt_disable
#: and preempt_enable, every spin lock's and bit spin lock's, count in thread_info, and
#: preempt_enable tests TIF_NEED_RESCHED)? 0 no (nominal), 1 yes. The mail gives no .config;
#: 2.6.12.1's arch/i386/defconfig (97) has CONFIG_PREEMPT=y, but the machine is a four-way
#: Xeon MP server running a throughput test, and the option's help (arch/i386/Kconfig
#: 514-524 of 2.6.12.1: "Say Y here if you are building a kernel for a desktop, embedded or
#: real-time system. Say N if you are unsure.") and the next release's preemption choice
#: (kernel/Kconfig.preempt, 2.6.13, August 2005: default PREEMPT_NONE, "No Forced Preemption
#: (Server)... Select this option if you are building a kernel for a server") both point a
#: server's kernel to N. Which 2005 distributions shipped it on or off is not checked here
#: (their .configs were not found). Either value is a kernel such a machine could have run.
PREEMPT = ("yoshioka2005:kernel.preempt", 0, 0, 1,
           ("the mail gives no .config: 0, CONFIG_PREEMPT off, as the option's help (2.6.12) "
            "and 2.6.13's PREEMPT_NONE default ('Server') advise for a server; 1, on, as "
            "2.6.12.1's arch/i386/defconfig has it"))

def preempt():
    """CONFIG_PREEMPT as the model takes it (the estimate read): 0 or 1."""
    return 1 if estimates.value(PREEMPT[0], PREEMPT[1]) >= 0.5 else 0
