/*
 * fill_words: store a 32-bit value into n consecutive words (a plain store loop).
 * A helper for the book's experiments (dirtying a page before it is flushed); it models no
 * particular kernel routine.
 *
 * In:  r3 = destination, r4 = value, r5 = number of words (> 0)
 */
        .globl  fill_words
fill_words:
        mtctr   r5
1:      stw     r4, 0(r3)
        addi    r3, r3, 4
        bdnz    1b
        blr
