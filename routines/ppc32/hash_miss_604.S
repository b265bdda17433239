/*
 * hash_miss_604: Linux 2.2.0's DataAccess (0x300) and InstructionAccess (0x400) for a user
 * page's hash-table miss on the 604, as the 604 backend (emu.kernel.ppc604) runs them for
 * its own, Python-driven, user accesses (Kernel.touch: the mmap, fork and exec workloads).
 * The CPU's table search found no HPTE (or a store met a read-only one) and delivered the
 * ISI / DSI: the prologue and hash_page of head.S 455-500 (davej-history f6cce5dae), the
 * same instructions entry_22.S runs for the 604 under emu.kernel.entry, built from
 * exception_22.S's macros as hash_miss_603.S is for the 603: EXCEPTION_PROLOG, the "weird
 * error?" (DSI) or "no PTE found?" (ISI) test, `bl hash_page` (HASH_PAGE_USER22, its 2.1.51
 * and 2.4 variants by the backend's flush), whose return from the exception `rfi`s to SRR0:
 * the retried access, which for the backend is the halt address (the call ends; the
 * backend's search then finds the new HPTE).
 *
 * What the model changes: when hash_page cannot make the HPTE, 2.2.0 goes on to
 * transfer_to_handler and do_page_fault; here the call ends at the halt address (da_slow /
 * ia_slow) and the kernel model's fault path follows. The call's SRR0 is the halt address,
 * where the ISI's rfi must return, so InstructionAccess takes the fetched address from DAR,
 * which the backend sets for the model's ISI (FETCH_FROM_DAR: mfspr for head.S's
 * `mr r3,r22`, one instruction either way; the 604 has no IMISS). The backend's thread
 * block stands for the task as the 603's does (TSS_PGDIR, TASK_MM, TSS_KSP); SPRG2 holds
 * the frame. Loaded by the backend after exception_22.S with those equates, HALT,
 * KDATA_HTAB_RELOADS, create_hpte and FETCH_FROM_DAR.
 */
        .globl  user_dsi604
user_dsi604:                            # DataAccess
        EXCEPTION_PROLOG uda4
        mfspr   r20, DSISR
        USER_HASH_DA
da_slow:
        ba      HALT                    # do_page_fault: the kernel model's fault path

        .globl  user_isi604
user_isi604:                            # InstructionAccess
        EXCEPTION_PROLOG uia4
        USER_HASH_IA
ia_slow:
        ba      HALT

        HASH_PAGE_USER22
