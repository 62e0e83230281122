/* input: what the operator's keys, pastes and clicks do. Each key goes to
 * exactly one place: the open help or dialog, else the prompt while it has
 * the focus, else the screen's commands. Text (typed or pasted) never
 * reaches a command key, and no printable key flips the mode. */
#include "tui/app.h"

#include <string.h>

#include "tui/layout.h"

/* Keys the terminal description does not name: the bracketed paste's
 * markers, Ctrl-Left and Ctrl-Right (looked up at start). */
#define KEY_PASTE_BEGIN (KEY_MAX + 1)
#define KEY_PASTE_END   (KEY_MAX + 2)
#define CONFIRM_MS      2000 /* a second Esc or Ctrl-C within this confirms */

static int key_ctrl_left = -1, key_ctrl_right = -1;

static int extended_key(const char *cap)
{
        char *s = tigetstr((char *)cap);

        if (s == NULL || s == (char *)-1)
                return -1;
        return key_defined(s) > 0 ? key_defined(s) : -1;
}

void input_setup(void)
{
        define_key("\033[200~", KEY_PASTE_BEGIN);
        define_key("\033[201~", KEY_PASTE_END);
        key_ctrl_left = extended_key("kLFT5");
        key_ctrl_right = extended_key("kRIT5");
}

/* ---- the prompt ---- */

static bool prompt_focused(struct app *a)
{
        if (app_sends_nothing(a) || approve_active(a))
                return false;
        return a->screen == SCREEN_SETUP ? a->setup_focus == SETUP_PROMPT : a->typing;
}

/* Gives the prompt the focus, for text that must land there. */
static void focus_prompt(struct app *a)
{
        if (a->screen == SCREEN_SETUP)
                a->setup_focus = SETUP_PROMPT;
        else
                a->typing = true;
}

static void insert_char(struct app *a, wint_t ch)
{
        char mb[MB_LEN_MAX + 1];
        int n = wctomb(mb, (wchar_t)ch);

        if (n > 0)
                prompt_insert(&a->prompt, mb, (size_t)n);
}

/* Enter in the prompt: start the session, send the follow-up, or queue it
 * while a turn runs. */
static void submit(struct app *a)
{
        if (!prompt_has_text(&a->prompt)) {
                snprintf(a->status, sizeof(a->status), "type a prompt first");
                return;
        }
        if (a->att != NULL) {
                attach_submit(a);
                return;
        }
        if (a->busy) {
                app_queue_prompt(a);
                return;
        }
        app_start_prompt(a);
}

/* Keys that edit a line; false for the rest (Enter, Esc, Tab, function
 * keys). Control keys without an edit are taken, and do nothing. */
bool input_edit(struct prompt *p, int kind, wint_t ch, bool alt)
{
        static const struct {
                wint_t key;
                bool code;
                enum prompt_edit edit;
        } edits[] = {
            {KEY_LEFT, true, PROMPT_LEFT},
            {KEY_RIGHT, true, PROMPT_RIGHT},
            {KEY_HOME, true, PROMPT_HOME},
            {KEY_END, true, PROMPT_END},
            {KEY_BACKSPACE, true, PROMPT_BACKSPACE},
            {KEY_DC, true, PROMPT_DELETE},
            {KEY_UP, true, PROMPT_UP},
            {KEY_DOWN, true, PROMPT_DOWN},
            {2, false, PROMPT_LEFT},  /* Ctrl-B */
            {6, false, PROMPT_RIGHT}, /* Ctrl-F */
            {1, false, PROMPT_HOME},  /* Ctrl-A */
            {5, false, PROMPT_END},   /* Ctrl-E */
            {127, false, PROMPT_BACKSPACE},
            {8, false, PROMPT_BACKSPACE},
            {4, false, PROMPT_DELETE},      /* Ctrl-D */
            {21, false, PROMPT_KILL_START}, /* Ctrl-U */
            {11, false, PROMPT_KILL_END},   /* Ctrl-K */
            {23, false, PROMPT_KILL_WORD},  /* Ctrl-W */
            {16, false, PROMPT_UP},         /* Ctrl-P */
            {14, false, PROMPT_DOWN},       /* Ctrl-N */
        };
        bool code = kind == KEY_CODE_YES;
        size_t i;

        if (alt && !code) {
                if (ch == '\r' || ch == '\n')
                        prompt_insert(p, "\n", 1);
                else if (ch == 'b' || ch == 'B')
                        prompt_edit(p, PROMPT_WORD_LEFT);
                else if (ch == 'f' || ch == 'F')
                        prompt_edit(p, PROMPT_WORD_RIGHT);
                else if (ch == 127 || ch == 8)
                        prompt_edit(p, PROMPT_KILL_WORD);
                return true; /* other Alt keys do nothing here */
        }
        if (code && (int)ch == key_ctrl_left)
                return prompt_edit(p, PROMPT_WORD_LEFT), true;
        if (code && (int)ch == key_ctrl_right)
                return prompt_edit(p, PROMPT_WORD_RIGHT), true;
        for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++)
                if (edits[i].key == ch && edits[i].code == code) {
                        prompt_edit(p, edits[i].edit);
                        return true;
                }
        if (!code && ch >= 32) {
                char mb[MB_LEN_MAX + 1];
                int n = wctomb(mb, (wchar_t)ch);
                if (n > 0)
                        prompt_insert(p, mb, (size_t)n);
                return true;
        }
        return false;
}

/* Keys with a meaning in the prompt; false sends the key on to the
 * screen's commands (function keys, paging, the mouse). */
static bool key_prompt(struct app *a, int kind, wint_t ch, bool alt)
{
        if (input_edit(&a->prompt, kind, ch, alt))
                return true;
        if (kind == KEY_CODE_YES) {
                if (ch == KEY_ENTER) {
                        submit(a);
                        return true;
                }
                return false;
        }
        switch (ch) {
        case '\r':
                submit(a);
                return true;
        case '\n':
                /* Ctrl-J: a new line, as Alt-Enter; but keys typed before
                 * the terminal was set up had Enter turned into "\n" */
                if (a->early_input)
                        submit(a);
                else
                        prompt_insert(&a->prompt, "\n", 1);
                return true;
        case 27:
                if (a->screen == SCREEN_SETUP)
                        a->setup_focus = SETUP_MODE;
                else
                        a->typing = false; /* the text stays for later */
                return true;
        case '\t':
                if (a->screen == SCREEN_SETUP) {
                        a->setup_focus = SETUP_MODE;
                        return true;
                }
                return false; /* panes still take Tab while typing */
        }
        return true; /* other control keys never fall through to commands */
}

/* ---- the setup screen ---- */

/* The limits line has the focus: Left and Right pick a limit, Up and Down
 * (or + and -) step it through its presets. */
static bool key_setup_limits(struct app *a, int kind, wint_t ch)
{
        if (kind == KEY_CODE_YES) {
                if (ch == KEY_LEFT)
                        a->limit_field =
                            (enum setup_limit)((a->limit_field + LIMIT_COUNT - 1) % LIMIT_COUNT);
                else if (ch == KEY_RIGHT)
                        a->limit_field = (enum setup_limit)((a->limit_field + 1) % LIMIT_COUNT);
                else if (ch == KEY_UP || ch == KEY_DOWN)
                        app_step_limit(a, a->limit_field, ch == KEY_UP ? 1 : -1);
                else
                        return false;
                return true;
        }
        if (ch == '+' || ch == '-') {
                app_step_limit(a, a->limit_field, ch == '+' ? 1 : -1);
                return true;
        }
        return false;
}

/* The mode cards (or the limits line) have the focus: arrows and space
 * flip (or step a limit), Tab moves on, Esc goes back to the prompt, and
 * any other text goes to the prompt. */
static void key_setup_mode(struct app *a, int kind, wint_t ch)
{
        if (a->setup_focus == SETUP_LIMITS && key_setup_limits(a, kind, ch))
                return;
        if (kind == KEY_CODE_YES) {
                if (ch == KEY_LEFT || ch == KEY_RIGHT || ch == KEY_UP || ch == KEY_DOWN)
                        app_flip_mode(a);
                else if (ch == KEY_BTAB)
                        a->setup_focus = a->setup_focus == SETUP_LIMITS ? SETUP_MODE : SETUP_PROMPT;
                else if (ch == KEY_ENTER)
                        submit(a);
                return;
        }
        if (ch == ' ' && a->setup_focus == SETUP_MODE) {
                app_flip_mode(a);
        } else if (ch == '\t') {
                a->setup_focus = a->setup_focus == SETUP_MODE ? SETUP_LIMITS : SETUP_PROMPT;
        } else if (ch == 27) {
                a->setup_focus = SETUP_PROMPT;
        } else if (ch == '\r') {
                a->setup_focus = SETUP_PROMPT;
                if (prompt_has_text(&a->prompt))
                        submit(a);
        } else if (ch > 32) {
                a->setup_focus = SETUP_PROMPT;
                insert_char(a, ch);
        }
}

/* ---- dialogs ---- */

static void key_dialog(struct app *a, int kind, wint_t ch)
{
        enum dialog d = a->dialog;
        bool term = d == DIALOG_KILL && kind != KEY_CODE_YES && (ch == 't' || ch == 'T');

        if (term || (kind != KEY_CODE_YES && (ch == 'y' || ch == 'Y'))) {
                /* typed-ahead text ("ky...") must not confirm a kill */
                if (app_now_ms() - a->dialog_ms < DIALOG_GUARD_MS)
                        return;
        } else {
                if (kind == KEY_CODE_YES && ch == KEY_MOUSE)
                        return;
                a->dialog = DIALOG_NONE;
                return;
        }
        a->dialog = DIALOG_NONE;
        if (term) {
                app_stop_exec(a, a->dialog_exec);
        } else if (d == DIALOG_KILL) {
                if (app_kill_exec(a, a->dialog_exec) == 0)
                        snprintf(a->status, sizeof(a->status), "%s execution #%llu",
                                 a->att != NULL ? "asked the session to kill" : "killed",
                                 (unsigned long long)a->dialog_exec);
                else
                        snprintf(a->status, sizeof(a->status), "execution #%llu had ended",
                                 (unsigned long long)a->dialog_exec);
        } else if (d == DIALOG_KILL_ALL) {
                unsigned cancelled, killed = app_kill_all(a, &cancelled);
                if (cancelled > 0)
                        snprintf(a->status, sizeof(a->status),
                                 "killed %u executions, cancelled %u queued calls", killed,
                                 cancelled);
                else
                        snprintf(a->status, sizeof(a->status), "killed %u executions", killed);
        } else if (d == DIALOG_QUIT) {
                app_quit(a, 0);
        }
}

static void open_dialog(struct app *a, enum dialog d)
{
        a->dialog = d;
        a->dialog_ms = app_now_ms();
}

/* ---- lists and the mouse ---- */

static void move_sel(struct app *a, long delta)
{
        if (a->detail.open) {
                detail_scroll(a, delta);
        } else if (a->focus == PANE_TRANSCRIPT) {
                a->scroll -= delta;
                if (a->scroll < 0)
                        a->scroll = 0;
        } else {
                const struct list_view *lv = &a->lists[a->focus];
                app_list_sync(a, a->focus);
                a->sel[a->focus] = listview_move(lv, a->sel[a->focus], delta);
                /* back on the last row of the arrival order: follow new ones */
                a->follow[a->focus] = lv->sort == LIST_SORT_ARRIVAL && lv->n > 0 &&
                                      a->sel[a->focus] == lv->rows[lv->n - 1];
        }
}

/* The pane and item under a screen cell, as last drawn; false for none. */
static bool item_at(struct app *a, int y, int x, enum pane *p, long *item)
{
        struct layout l;
        int k;

        layout_compute(COLS, LINES, (enum layout_pane)a->focus, &l);
        k = layout_pane_at(&l, y, x);
        if (k < 0)
                return false;
        *p = (enum pane)k;
        *item = y >= 0 && y < HIT_ROWS ? a->hit[k][y] : -1;
        return true;
}

static void click_setup(struct app *a, const MEVENT *m)
{
        struct layout_setup ls;

        layout_setup_compute(COLS, &ls);
        if (m->y >= ls.local.y && m->y < ls.local.y + ls.local.h) {
                if (m->x >= ls.local.x && m->x < ls.local.x + ls.local.w && a->mode != EXEC_LOCAL)
                        app_flip_mode(a);
                else if (m->x >= ls.sandbox.x && m->x < ls.sandbox.x + ls.sandbox.w &&
                         a->mode != EXEC_SANDBOX)
                        app_flip_mode(a);
        } else if (m->y == LINES - 1) {
                a->setup_focus = SETUP_PROMPT;
        }
}

/* Click: on a pane, focus it; on a row, select it; on the selected row
 * (or a double click), open its details. Wheel: scroll what is under the
 * pointer (the details when open). */
static void key_mouse(struct app *a)
{
        MEVENT m;
        enum pane p;
        long item;
        bool click, dbl;

        if (getmouse(&m) != OK)
                return;
        click = (m.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)) != 0;
        dbl = (m.bstate & BUTTON1_DOUBLE_CLICKED) != 0;
        if (a->screen == SCREEN_SETUP) {
                if (click || dbl)
                        click_setup(a, &m);
                return;
        }
        if (a->detail.open) {
                if (m.bstate & BUTTON4_PRESSED)
                        detail_scroll(a, -3);
                else if (m.bstate & BUTTON5_PRESSED)
                        detail_scroll(a, 3);
                return;
        }
        if (!item_at(a, m.y, m.x, &p, &item))
                return;
        if (m.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
                a->focus = p;
                move_sel(a, m.bstate & BUTTON4_PRESSED ? -3 : 3);
                return;
        }
        if (!click && !dbl)
                return;
        if (item >= 0 && (dbl || (a->focus == p && a->sel[p] == item))) {
                a->focus = p;
                a->sel[p] = item;
                detail_open(a);
                return;
        }
        a->focus = p;
        if (item >= 0) {
                const struct list_view *lv = &a->lists[p];
                app_list_sync(a, p);
                a->sel[p] = item;
                a->follow[p] = lv->sort == LIST_SORT_ARRIVAL && item == app_list_newest(a, p);
        }
}

/* ---- lists: sort, filter, the offender ---- */

/* The list the list keys act on: the focused one, else the executions. */
static enum pane list_pane(const struct app *a)
{
        return a->focus == PANE_TRANSCRIPT ? PANE_EXECS : a->focus;
}

static const char *pane_noun(enum pane p)
{
        return p == PANE_EXECS ? "executions" : "tool calls";
}

/* P, M, T (as in htop) pick a sort, the same key again the arrival order;
 * F6 cycles through them. The selection goes to the first row. */
static void set_sort(struct app *a, enum list_sort s, bool cycle)
{
        enum pane p = list_pane(a);
        struct list_view *lv = &a->lists[p];

        if (cycle)
                lv->sort = (enum list_sort)((lv->sort + 1) % LIST_SORT_COUNT);
        else
                lv->sort = lv->sort == s ? LIST_SORT_ARRIVAL : s;
        a->focus = p;
        a->follow[p] = lv->sort == LIST_SORT_ARRIVAL;
        a->sel[p] = -1;
        a->top[p] = 0;
        snprintf(a->status, sizeof(a->status), "%s by %s%s", pane_noun(p),
                 listview_sort_name(lv->sort),
                 lv->sort == LIST_SORT_ARRIVAL ? "" : " (the same key again: arrival order)");
}

/* One key into a one-line field (a filter, a search): 1 when Enter ends
 * it, -1 when Esc cancels it (emptied), 0 while it goes on. */
static int key_field(char *buf, size_t cap, int kind, wint_t ch)
{
        size_t n = strlen(buf);
        char mb[MB_LEN_MAX + 1];
        int k;

        if (kind == KEY_CODE_YES ? ch == KEY_BACKSPACE : ch == 127 || ch == 8) {
                while (n > 0 && ((unsigned char)buf[--n] & 0xc0) == 0x80)
                        ;
                buf[n] = '\0';
        } else if (kind == KEY_CODE_YES ? ch == KEY_ENTER : ch == '\r' || ch == '\n') {
                return 1;
        } else if (kind != KEY_CODE_YES && ch == 27) {
                buf[0] = '\0';
                return -1;
        } else if (kind != KEY_CODE_YES && ch >= 32 && (k = wctomb(mb, (wchar_t)ch)) > 0 &&
                   n + (size_t)k < cap) {
                memcpy(buf + n, mb, (size_t)k);
                buf[n + (size_t)k] = '\0';
        }
        return 0;
}

/* Typing the focused list's filter: it applies as it is typed. */
static void key_filter(struct app *a, int kind, wint_t ch)
{
        struct list_view *lv = &a->lists[a->filtering];

        a->follow[a->filtering] = false;
        if (key_field(lv->filter, sizeof(lv->filter), kind, ch) != 0)
                a->filtering = -1;
}

/* Typing a search of the output; Enter finds the first match. */
static void key_search(struct app *a, int kind, wint_t ch)
{
        struct detail_view *d = &a->detail;
        int r = key_field(d->search, sizeof(d->search), kind, ch);

        if (r == 0) {
                snprintf(a->status, sizeof(a->status), "search: %.60s_  (Enter finds, Esc cancels)",
                         d->search);
                return;
        }
        d->searching = false;
        d->match = -1;
        if (r > 0 && !detail_search(a, 1))
                snprintf(a->status, sizeof(a->status), "no line holds \"%.60s\"", d->search);
        else if (r > 0)
                snprintf(a->status, sizeof(a->status),
                         "line %llu holds \"%.60s\": n next, N previous",
                         (unsigned long long)detail_line_no(a, d->match), d->search);
}

/* The detail view's own keys: / search, n N the next and previous match,
 * s saves the output; false for the rest. */
static bool key_detail(struct app *a, wint_t ch)
{
        struct detail_view *d = &a->detail;

        switch (ch) {
        case '/':
                d->searching = true;
                d->search[0] = '\0';
                snprintf(a->status, sizeof(a->status), "search: _  (Enter finds, Esc cancels)");
                return true;
        case 'n':
        case 'N':
                if (d->search[0] == '\0')
                        snprintf(a->status, sizeof(a->status), "/ searches the output first");
                else if (!detail_search(a, ch == 'n' ? 1 : -1))
                        snprintf(a->status, sizeof(a->status), "no %s line holds \"%.60s\"",
                                 ch == 'n' ? "later" : "earlier", d->search);
                else
                        snprintf(a->status, sizeof(a->status), "line %llu holds \"%.60s\"",
                                 (unsigned long long)detail_line_no(a, d->match), d->search);
                return true;
        case 's':
                detail_save(a);
                return true;
        }
        return false;
}

static void start_filter(struct app *a)
{
        a->filtering = (int)list_pane(a);
        a->focus = (enum pane)a->filtering;
        snprintf(a->status, sizeof(a->status),
                 "filter %s: type to narrow, Enter keeps it, Esc clears it",
                 pane_noun((enum pane)a->filtering));
}

/* o: the running execution using the most CPU; O: the most memory. */
static void jump_to_offender(struct app *a, bool memory)
{
        size_t n = viewmodel_nexecs(a->vm), i;
        long best = -1;
        double top = -1;

        for (i = 0; i < n; i++) {
                const struct viewmodel_exec *e = viewmodel_exec(a->vm, i);
                double v = memory ? (double)e->stats.mem_bytes : e->stats.cpu_pct;
                if (viewmodel_exec_live(e) && v > top) {
                        top = v;
                        best = (long)i;
                }
        }
        if (best < 0) {
                snprintf(a->status, sizeof(a->status), "no execution is running");
                return;
        }
        a->focus = PANE_EXECS;
        a->lists[PANE_EXECS].filter[0] = '\0';
        a->sel[PANE_EXECS] = best;
        a->follow[PANE_EXECS] = false;
        snprintf(a->status, sizeof(a->status), "#%llu uses the most %s (k kills it)",
                 (unsigned long long)viewmodel_exec(a->vm, (size_t)best)->id,
                 memory ? "memory" : "CPU");
}

/* ---- the live view's commands ---- */

/* Esc: close the details, else interrupt the turn; while tools run, only
 * a second Esc within CONFIRM_MS interrupts (it kills them). */
static void key_escape(struct app *a)
{
        unsigned running;

        if (a->detail.open) {
                detail_close(a);
                return;
        }
        if (a->focus != PANE_TRANSCRIPT && a->lists[a->focus].filter[0] != '\0') {
                a->lists[a->focus].filter[0] = '\0';
                snprintf(a->status, sizeof(a->status), "filter cleared");
                return;
        }
        if (!a->busy)
                return;
        running = app_running(a, NULL);
        if (running > 0 && app_now_ms() - a->esc_ms > CONFIRM_MS) {
                a->esc_ms = app_now_ms();
                snprintf(a->status, sizeof(a->status),
                         "Esc again to interrupt the turn and kill %u running execution%s", running,
                         running == 1 ? "" : "s");
                return;
        }
        a->esc_ms = 0;
        app_interrupt(a);
}

static void key_kill(struct app *a)
{
        const char *why = NULL;

        a->dialog_exec = app_kill_target(a, &why);
        if (a->dialog_exec != 0)
                open_dialog(a, DIALOG_KILL);
        else
                snprintf(a->status, sizeof(a->status), "%s", why);
}

static void key_paging(struct app *a, wint_t ch)
{
        switch (ch) {
        case KEY_UP:
                move_sel(a, -1);
                break;
        case KEY_DOWN:
                move_sel(a, 1);
                break;
        case KEY_PPAGE:
                move_sel(a, -(LINES / 2));
                break;
        case KEY_NPAGE:
                move_sel(a, LINES / 2);
                break;
        case KEY_HOME:
                move_sel(a, -1000000);
                break;
        case KEY_END:
                move_sel(a, 1000000);
                break;
        case KEY_BTAB:
                a->focus = (enum pane)((a->focus + PANE_COUNT - 1) % PANE_COUNT);
                break;
        }
}

static void key_live(struct app *a, wint_t ch)
{
        unsigned queued;

        if (a->detail.open && key_detail(a, ch))
                return;
        if (a->replay && replay_key(a, ch))
                return;
        if (a->att != NULL && attach_key(a, ch))
                return;
        switch (ch) {
        case 'q':
                if (a->busy)
                        open_dialog(a, DIALOG_QUIT);
                else
                        app_quit(a, 0);
                break;
        case '?':
                a->help = true;
                break;
        case 'm':
                app_flip_mode(a);
                break;
        case '\t':
                a->focus = (enum pane)((a->focus + 1) % PANE_COUNT);
                break;
        case '\n':
        case '\r':
                /* a call waiting for approval opens its dialog */
                if (!a->detail.open && a->focus == PANE_TOOLS &&
                    approve_show(a, a->sel[PANE_TOOLS]))
                        break;
                if (!a->detail.open && !detail_open(a))
                        snprintf(a->status, sizeof(a->status),
                                 "nothing selected: Tab to the tool calls or executions");
                break;
        case 27:
                key_escape(a);
                break;
        case 'k':
                key_kill(a);
                break;
        case 'K':
                if (app_running(a, &queued) > 0 || queued > 0)
                        open_dialog(a, DIALOG_KILL_ALL);
                else
                        snprintf(a->status, sizeof(a->status), "nothing is running");
                break;
        case 'i':
                a->typing = true;
                if (a->busy)
                        snprintf(a->status, sizeof(a->status),
                                 "a turn is running: Enter queues the message for when it ends");
                break;
        case 'n':
                app_new_session(a);
                break;
        case 't':
                app_next_theme(a);
                break;
        case '/':
                start_filter(a);
                break;
        case 'p':
                app_toggle_pause(a);
                break;
        case 'e':
                a->expand_tools = !a->expand_tools;
                snprintf(a->status, sizeof(a->status), "tool calls in the transcript: %s",
                         a->expand_tools ? "with the end of their output (e: one line each)"
                                         : "one line each (e: with their output)");
                break;
        case 'P':
                set_sort(a, LIST_SORT_CPU, false);
                break;
        case 'M':
                set_sort(a, LIST_SORT_MEMORY, false);
                break;
        case 'T':
                set_sort(a, LIST_SORT_AGE, false);
                break;
        case 'o':
        case 'O':
                jump_to_offender(a, ch == 'O');
                break;
        case 'A':
                if (!approve_show(a, -1))
                        snprintf(a->status, sizeof(a->status), "%s",
                                 a->replay ? "replay is read-only: no approvals"
                                           : "no call waits for approval");
                break;
        }
}

/* Function keys that act on every screen. */
static bool key_global(struct app *a, int kind, wint_t ch)
{
        if (kind != KEY_CODE_YES)
                return false;
        if (a->att != NULL && (ch == KEY_F(2) || ch == KEY_F(3) || ch == KEY_F(4))) {
                snprintf(a->status, sizeof(a->status),
                         "attached: the mode and the approval policy are the session's own");
        } else if (a->att != NULL && ch == KEY_F(10)) {
                app_quit(a, 0);
        } else if (ch == KEY_F(1)) {
                a->help = true;
        } else if (ch == KEY_F(2)) {
                app_flip_mode(a);
        } else if (ch == KEY_F(3)) {
                app_cycle_policy(a);
        } else if (ch == KEY_F(4)) {
                resume_pick(a);
        } else if (ch == KEY_F(6) && a->screen == SCREEN_LIVE) {
                set_sort(a, LIST_SORT_ARRIVAL, true);
        } else if (ch == KEY_F(12)) {
                app_toggle_mouse(a);
        } else if (ch == KEY_F(10)) {
                if (a->busy)
                        open_dialog(a, DIALOG_QUIT);
                else
                        app_quit(a, 0);
        } else {
                return false;
        }
        return true;
}

static void key(struct app *a, int kind, wint_t ch, bool alt)
{
        if (kind == KEY_CODE_YES && ch == KEY_RESIZE)
                return;
        if (kind != KEY_CODE_YES && ch == 12) { /* Ctrl-L */
                clearok(curscr, TRUE);
                return;
        }
        /* nothing on screen to act on: keys must not act unseen */
        if (COLS < LAYOUT_MIN_COLS || LINES < LAYOUT_MIN_ROWS)
                return;
        /* no session yet, only the image's unpack: the keys that end it */
        if (a->screen == SCREEN_PREPARING) {
                if (kind == KEY_CODE_YES ? ch == KEY_F(10) : ch == 27 || ch == 'q')
                        app_quit(a, 128 + SIGINT);
                return;
        }
        if (a->help) {
                a->help = false;
                return;
        }
        if (a->dialog != DIALOG_NONE) {
                key_dialog(a, kind, ch);
                return;
        }
        if (a->screen == SCREEN_LIVE && approve_active(a)) {
                approve_key(a, kind, ch);
                return;
        }
        if (kind == KEY_CODE_YES && ch == KEY_MOUSE) {
                key_mouse(a);
                return;
        }
        if (a->detail.open && a->detail.searching) {
                key_search(a, kind, ch);
                return;
        }
        if (a->filtering >= 0 && !a->detail.open) {
                key_filter(a, kind, ch);
                return;
        }
        if (prompt_focused(a) && key_prompt(a, kind, ch, alt))
                return;
        if (key_global(a, kind, ch))
                return;
        if (a->screen == SCREEN_SETUP) {
                if (a->setup_focus != SETUP_PROMPT)
                        key_setup_mode(a, kind, ch);
                return;
        }
        a->status[0] = '\0';
        if (kind == KEY_CODE_YES && a->replay && replay_code_key(a, ch))
                return;
        if (kind == KEY_CODE_YES)
                key_paging(a, ch);
        else if (!alt)
                key_live(a, ch);
}

/* A bracketed paste: text for the prompt, whatever the screen. */
static void paste_char(struct app *a, int kind, wint_t ch)
{
        if (app_sends_nothing(a))
                return;
        /* into the approval dialog's line, if one is typed; else nowhere */
        if (a->screen == SCREEN_LIVE && approve_active(a)) {
                if (a->approve.stage != APPROVE_CHOOSE && kind != KEY_CODE_YES && ch >= 32)
                        input_edit(&a->approve.field, kind, ch, false);
                return;
        }
        focus_prompt(a);
        if (kind == KEY_CODE_YES)
                ch = ch == KEY_ENTER ? '\n' : 0;
        if (ch == '\r' || ch == '\n' || ch == '\t' || ch >= 32)
                insert_char(a, ch == '\r' ? '\n' : ch);
}

void input_read(struct app *a)
{
        wint_t ch, next;
        int kind, k2;
        bool pasted = false;

        while ((kind = get_wch(&ch)) != ERR) {
                if (kind == KEY_CODE_YES && (ch == KEY_PASTE_BEGIN || ch == KEY_PASTE_END)) {
                        a->pasting = ch == KEY_PASTE_BEGIN;
                        if (a->pasting && !(a->screen == SCREEN_LIVE && approve_active(a)))
                                focus_prompt(a);
                        pasted = true;
                        continue;
                }
                /* After a paste, the rest of its read stays text too: a
                 * pasted end marker must not turn the tail into keys. */
                if (a->pasting || (pasted && kind != KEY_CODE_YES && ch >= 32)) {
                        paste_char(a, kind, ch);
                        continue;
                }
                /* Alt-x arrives as Esc and x together, a lone Esc alone;
                 * only the prompt has Alt keys (elsewhere Esc, then x) */
                if (kind != KEY_CODE_YES && ch == 27 && prompt_focused(a) &&
                    (k2 = get_wch(&next)) != ERR) {
                        if (k2 == KEY_CODE_YES || next == 27) {
                                key(a, kind, ch, false);
                                key(a, k2, next, false);
                        } else {
                                key(a, k2, next, true);
                        }
                } else {
                        key(a, kind, ch, false);
                }
                if (a->done)
                        return;
        }
        a->early_input = false;
        app_mark_dirty(a);
}
