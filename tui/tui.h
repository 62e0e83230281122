/* tui: the ncurses supervisor. `proctor [opts]` opens it on the setup
 * screen; the session runs on the same libuv loop as the terminal input, and
 * every pane is drawn from the core's view model. The only module that
 * touches the terminal: it owns start-up, teardown and signal restore. */
#ifndef PROCTOR_TUI_H
#define PROCTOR_TUI_H

int tui_main(int argc, char **argv);

/* `proctor replay [--speed N|max] TRACE`: a recorded session played in the
 * same live view, read-only, with pause and step. */
int tui_replay_main(int argc, char **argv);

/* For the benchmark: draws `frames` full frames of `vm` (a live session
 * view, cols x rows) into an off-screen terminal and stores each frame's
 * time in ns[]. 0 or -errno. */
struct viewmodel;
#include <stdint.h>
int tui_bench_frames(struct viewmodel *vm, int cols, int rows, int frames, uint64_t *ns);

#endif
