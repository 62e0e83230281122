/* terminal: the check that comes before initscr, which on a terminal it
 * cannot drive prints a cryptic line and exits, or draws garbage. Reads the
 * terminal description only; never writes to the terminal. */
#include "tui/terminal.h"

#include <curses.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <term.h>
#include <unistd.h>

int terminal_check(char *err, size_t errlen)
{
        const char *term = getenv("TERM");
        const char *cup;
        int found = 0;
        bool moves;

        if (!isatty(0) || !isatty(1)) {
                snprintf(err, errlen, "the supervisor needs a terminal");
                return -ENOTTY;
        }
        if (term == NULL || term[0] == '\0') {
                snprintf(err, errlen, "TERM is not set, so the terminal cannot be drawn on");
                return -ENOENT;
        }
        /* with &found, setupterm reports instead of exiting */
        if (setupterm(NULL, 1, &found) != OK) {
                snprintf(err, errlen,
                         found == -1 ? "no terminal database here to describe TERM=%.60s"
                                     : "no description of the terminal type TERM=%.60s "
                                       "(try TERM=xterm-256color, or install ncurses-term)",
                         term);
                return -ENOENT;
        }
        cup = tigetstr("cup");
        moves = cup != NULL && cup != (char *)-1;
        del_curterm(cur_term);
        if (!moves) {
                snprintf(err, errlen,
                         "the terminal type TERM=%.60s cannot move the cursor, which the "
                         "supervisor needs",
                         term);
                return -ENOENT;
        }
        return 0;
}
