/* Interrupt (Ctrl-C, Jupyter's Interrupt button: SIGINT) during an emulated run.
 *
 * Inside uc_emu_start no Python runs, so Python's own SIGINT handler only notes the signal,
 * and the run goes on to its end. While Python runs the emulator (emu.hw.interrupt), this
 * handler takes SIGINT instead: it sets a flag, which every block hook tests (one load of a
 * global, never set in a run that is not interrupted, so results are unchanged) and which
 * stops the emulator at its next block. Python then gives the signal to the handler it
 * replaced (emu_sigint_release), which raises KeyboardInterrupt as usual. */
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t sigint_pending;
static struct sigaction sigint_previous;
static int sigint_depth;                 /* nested catches: only the outermost installs */
static bool sigint_installed;

static void sigint_note(int signal) {
    (void)signal;
    sigint_pending = 1;
}

/* Take SIGINT from here on (unless it is ignored): at the outermost of nested calls */
EXPORT void emu_sigint_catch(void) {
    if (sigint_depth++ > 0)
        return;
    struct sigaction note;
    memset(&note, 0, sizeof note);
    note.sa_handler = sigint_note;
    sigemptyset(&note.sa_mask);
    note.sa_flags = SA_RESTART;
    sigint_pending = 0;
    sigint_installed = sigaction(SIGINT, NULL, &sigint_previous) == 0 &&
                       sigint_previous.sa_handler != SIG_IGN &&
                       sigaction(SIGINT, &note, NULL) == 0;
}

/* Give SIGINT back to the handler it had, at the outermost call; true if one came meanwhile
 * (then the caller raises it again, for that handler) */
EXPORT i64 emu_sigint_release(void) {
    if (--sigint_depth > 0)
        return 0;
    if (sigint_installed)
        sigaction(SIGINT, &sigint_previous, NULL);
    sigint_installed = false;
    i64 came = sigint_pending;
    sigint_pending = 0;
    return came;
}

/* Has SIGINT come since the outermost emu_sigint_catch? */
EXPORT i64 emu_sigint_pending(void) { return sigint_pending; }

/* After a run between emu_sigint_catch (if `caught`) and here: 1, SIGINT came (Python gives
 * it to its handler now); 2, it came inside an outer catch, which gives it; 0, none
 * (emu.run.calling.take_sigint) */
static i64 sigint_outcome(bool caught) {
    return caught && emu_sigint_release() ? 1 : sigint_pending ? 2 : 0;
}
