/* tui: the ncurses supervisor. `proctor [opts]` opens it on the setup
 * screen; the session runs on the same libuv loop as the terminal input, and
 * every pane is drawn from the core's view model. The only module that
 * touches the terminal: it owns start-up, teardown and signal restore. */
#ifndef PROCTOR_TUI_H
#define PROCTOR_TUI_H

int tui_main(int argc, char **argv);

/* `proctor resume [ID|TRACE] [options]` (argv[0] is "resume"): the
 * supervisor with an ended session's conversation on screen, going on
 * with the next prompt; without ID|TRACE, the newest ended session of the
 * workspace. */
int tui_resume_main(int argc, char **argv);

/* `proctor replay [--speed N|max] TRACE`: a recorded session played in the
 * same live view, read-only, with pause and step. */
int tui_replay_main(int argc, char **argv);

/* `proctor attach [--read-only] [ID]`: the live view of a running session
 * (the newest when no id is given) through its socket. */
int tui_attach_main(int argc, char **argv);

/* For the benchmark: draws `frames` full frames of `vm` (a live session
 * view, cols x rows) into an off-screen terminal and stores each frame's
 * time in ns[]; with `detail`, the detail view of the last tool call is
 * open; `before`, when given, runs untimed before each frame (to feed the
 * model). 0 or -errno. */
#include <stdbool.h>
#include <stdint.h>
struct viewmodel;
struct tui_bench {
        int cols, rows, frames;
        bool detail;
        void (*before)(struct viewmodel *vm, int frame, void *ud);
        void *ud;
};
int tui_bench_frames(struct viewmodel *vm, const struct tui_bench *b, uint64_t *ns);

#endif
