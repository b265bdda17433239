/*
 * hash_miss_603: Linux 2.2.0's DataAccess (0x300) and InstructionAccess (0x400) for a user
 * page on the 603 that searches a hash table, as the 603 backend (emu.kernel.ppc603,
 * reload="hash") runs them for its own user misses (Kernel.touch). In 2.2.0 the 603's miss
 * handlers, finding no HPTE, leave through DataAddressInvalid / InstructionAddressInvalid
 * (DSISR or SRR1 bit 1, DAR, TGPR off) with `b DataAccess` / `b InstructionAccess` (head.S
 * 783-805, 679-702 at f6cce5dae): the same prologue and hash_page the 604's storage
 * interrupt runs (head.S 455-500). So this file is that path built from exception_22.S's
 * macros, the instructions entry_22.S runs for the 604: EXCEPTION_PROLOG, the "weird
 * error?" (DSI) or "no PTE found?" (ISI) test, `bl hash_page` (HASH_PAGE_USER22, with its
 * 2.1.51 and 2.4 variants), whose return from the exception `rfi`s to SRR0: the retried
 * access, which for the backend is the halt address (the call ends; the access misses in
 * the TLB again and the handler finds the new HPTE).
 *
 * What the model changes: when hash_page cannot make the HPTE (no Linux PTE, or one that
 * forbids the access), 2.2.0 goes on to transfer_to_handler and do_page_fault; here the
 * call ends at the halt address (da_slow / ia_slow) and the kernel model's fault path
 * follows (Kernel.page_fault, its fixed costs). The call's SRR0 is the halt address, where
 * the ISI's rfi must return, so InstructionAccess takes the fetched address from IMISS,
 * which the 603 sets on the miss (FETCH_FROM_IMISS: mfspr for head.S's `mr r3,r22`, one
 * instruction either way). The backend's thread block stands for the
 * task: its words are the page directory (TSS_PGDIR), the mm pointer 2.1.51's hash_page
 * follows (TASK_MM - TSS: the block itself, MM_PGD 0) and the kernel stack pointer 2.1.51's
 * prologue takes from user mode (TSS_KSP); SPRG2 holds the frame for 2.2.0's (emu.kernel.
 * ppc603 sets both). Loaded by the backend after exception_22.S with those equates, HALT,
 * KDATA_HTAB_RELOADS, create_hpte, IMISS and FETCH_FROM_IMISS.
 */
        .globl  user_dsi603
user_dsi603:                            # the 0x300 stub's target: DataAccess
        EXCEPTION_PROLOG uda
        mfspr   r20, DSISR
        USER_HASH_DA
da_slow:
        ba      HALT                    # do_page_fault: the kernel model's fault path

        .globl  user_isi603
user_isi603:                            # the 0x400 stub's target: InstructionAccess
        EXCEPTION_PROLOG uia
        USER_HASH_IA
ia_slow:
        ba      HALT

        HASH_PAGE_USER22
