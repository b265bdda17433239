/*
 * The revoke records a commit writes, Linux 2.6.12, written for the book from the algorithm
 * of fs/jbd/revoke.c of 2.6.12.1: journal_write_revoke_records (500-534), which
 * journal_commit_transaction calls once a commit, after its data phase (fs/jbd/commit.c
 * 426). It takes the revoke table the commit's phase 1 switched away from (514-515: the one
 * j_revoke is not; journal_switch_revoke_table in commit_meta_2612.S's journal_lock_down)
 * and looks at each of its hash_size heads (517-530). A record is there only for a
 * metadata block freed and revoked in the transaction (journal_revoke, from ext3_forget
 * and ext3_free_blocks): iozone's write test frees none, so every list is empty and the
 * descriptor is never made (531-532). A record found is a fault here (ud2): writing it
 * (write_one_revoke_record, flush_descriptor) is not in the model.
 * Calling convention: cdecl. Offsets: the equates emu/papers/yoshioka2005/ext3model/
 * puts in front.
 */

/* journal_write_revoke_records(journal, transaction) */
        .globl  journal_write_revoke_records
journal_write_revoke_records:
        movl    4(%esp), %eax               # journal
        movl    J_REVOKE(%eax), %edx        # revoke = j_revoke == j_revoke_table[0] ?
        movl    J_REVOKE_TABLE(%eax), %ecx  #   j_revoke_table[1] : j_revoke_table[0]
        cmpl    %ecx, %edx
        jne     1f
        movl    J_REVOKE_TABLE+4(%eax), %ecx
1:      movl    RT_HASH_SIZE(%ecx), %edx    # for (i = 0; i < revoke->hash_size; i++)
        testl   %edx, %edx
        jle     3f
        movl    RT_HASH_TABLE(%ecx), %ecx   # hash_list = &revoke->hash_table[i]
2:      cmpl    %ecx, (%ecx)                # while (!list_empty(hash_list)): a record
        jne     9f
        addl    $8, %ecx
        decl    %edx
        jnz     2b
3:      ret
9:      ud2

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
