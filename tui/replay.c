/* replay: a recorded session played into the view model, read-only, in
 * the same live view: pause, step, speed. Nothing is executed. */
#include "tui/app.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session/config.h"
#include "tui/draw.h"
#include "tui/terminal.h"
#include "tui/tui.h"

static uint64_t event_ms(const json_t *ev)
{
        json_int_t t = json_integer_value(json_object_get(ev, "t_ms"));

        return t > 0 ? (uint64_t)t : 0;
}

/* Feeds the events due now, then sleeps until the next one (scaled by the
 * speed; long idle stretches are shortened to two seconds). */
void replay_next(uv_timer_t *t)
{
        struct app *a = t->data;
        uint64_t now, gap;
        size_t batch = 0;

        if (a->paused || a->next >= a->nevents)
                return;
        now = event_ms(a->events[a->next]);
        while (a->next < a->nevents &&
               (a->speed == 0 ? batch < 2000 : event_ms(a->events[a->next]) <= now)) {
                viewmodel_event(a->events[a->next++], a->vm);
                batch++;
        }
        app_mark_dirty(a);
        if (a->next >= a->nevents) {
                snprintf(a->status, sizeof(a->status), "replay finished (%zu events): q quits",
                         a->nevents);
                return;
        }
        gap =
            a->speed == 0 ? 0 : (uint64_t)((double)(event_ms(a->events[a->next]) - now) / a->speed);
        uv_timer_start(&a->play, replay_next, gap > 2000 ? 2000 : gap, 0);
}

static int load_trace(struct app *a, const char *path, char *err, size_t errlen)
{
        FILE *f = fopen(path, "r");
        char *line = NULL;
        size_t cap = 0, bad = 0;
        ssize_t n;

        if (f == NULL) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return -errno;
        }
        while ((n = getline(&line, &cap, f)) > 0) {
                json_t *ev = json_loadb(line, (size_t)n, 0, NULL);
                json_t **grown;
                if (!json_is_object(ev) || !json_is_string(json_object_get(ev, "type"))) {
                        json_decref(ev);
                        bad++;
                        continue;
                }
                grown = realloc(a->events, (a->nevents + 1) * sizeof(*grown));
                if (grown == NULL) {
                        json_decref(ev);
                        break;
                }
                a->events = grown;
                a->events[a->nevents++] = ev;
        }
        free(line);
        fclose(f);
        if (a->nevents == 0) {
                snprintf(err, errlen, "%s: no events in it", path);
                return -EINVAL;
        }
        if (bad > 0)
                snprintf(a->status, sizeof(a->status),
                         "%zu lines of the trace were not valid events and are skipped "
                         "(proctor replay --summary says which)",
                         bad);
        return 0;
}

static const char usage[] =
    "usage: proctor replay [--speed N|max] [--theme NAME|PATH] [--no-color] TRACE\n"
    "       proctor replay --summary TRACE\n";

static void print_help(void)
{
        printf("%s\n"
               "Plays a recorded session (a trace: JSON lines, one event each) in the\n"
               "supervisor's live view, read-only: nothing is executed again. --summary\n"
               "prints what happened instead, as text.\n\n"
               "options:\n"
               "  --speed N|max               N times as fast as recorded (default 1; idle\n"
               "                              stretches shortened to 2 s), or max: all at once\n"
               "%s"
               "  --config FILE               config file (its theme)\n"
               "  -h, --help                  show this help\n\n"
               "keys: space pauses and resumes, s steps one event while paused, Left and\n"
               "Right seek 10 s back and forth, + and - change the speed, Tab focus, Enter\n"
               "details, t theme, ? help, q quits.\n",
               usage, options_help_screen);
}

int tui_replay_main(int argc, char **argv)
{
        struct app a;
        uv_loop_t loop;
        char err[512];
        size_t i;
        int rc = 0;

        memset(&a, 0, sizeof(a));
        setlocale(LC_ALL, "");
        rc = config_resolve(argc, argv, &a.o, err, sizeof(err));
        if (rc == 0 && a.o.help) {
                print_help();
                return 0;
        }
        if (rc < 0 || a.o.argi != argc - 1) {
                fprintf(stderr, "proctor replay: %s\n%s(try 'proctor replay --help')\n",
                        rc < 0 ? err : "give one trace file", usage);
                return 2;
        }
        a.speed = 1.0;
        if (a.o.speed != NULL) {
                char *end;
                a.speed = strcmp(a.o.speed, "max") == 0 ? 0 : strtod(a.o.speed, &end);
                if (strcmp(a.o.speed, "max") != 0 && (*end != '\0' || !(a.speed > 0))) {
                        fprintf(stderr,
                                "proctor replay: --speed: expected a positive number "
                                "or max, got '%s'\n",
                                a.o.speed);
                        return 2;
                }
        }
        if (load_trace(&a, argv[argc - 1], err, sizeof(err)) < 0) {
                fprintf(stderr, "proctor replay: %s\n", err);
                free(a.events);
                return 2;
        }
        if (terminal_check(err, sizeof(err)) < 0) {
                fprintf(stderr, "proctor replay: %s; for text use 'proctor replay --summary'\n",
                        err);
                rc = 2;
                goto out;
        }
        uv_loop_init(&loop);
        a.loop = &loop;
        a.replay = true;
        a.screen = SCREEN_LIVE;
        a.vm = viewmodel_new();
        viewmodel_set_readonly(a.vm, true);
        app_reset_view(&a);
        app_find_themes_dir(&a);
        a.nthemes = theme_list(a.themes_dir, a.themes, THEME_LIST_MAX);
        theme_open(a.o.theme, a.themes_dir, &a.theme, err, sizeof(err));
        app_current = &a;
        app_start_terminal(&a);
        uv_timer_init(&loop, &a.play);
        a.play.data = &a;
        uv_timer_start(&a.play, replay_next, 0, 0);
        draw_frame(&a);
        uv_run(&loop, UV_RUN_DEFAULT);
        app_close_terminal(&a);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        detail_close(&a);
        draw_forget(&a);
        viewmodel_free(a.vm);
        app_current = NULL;
out:
        for (i = 0; i < a.nevents; i++)
                json_decref(a.events[i]);
        free(a.events);
        return rc;
}

uint64_t replay_position(const struct app *a, uint64_t *end_ms)
{
        if (end_ms != NULL)
                *end_ms = a->nevents > 0 ? event_ms(a->events[a->nevents - 1]) : 0;
        return a->next > 0 ? event_ms(a->events[a->next - 1]) : 0;
}

/* Moves the replay by delta_ms of recorded time: forward by feeding the
 * events up to there, back by feeding a fresh view model from the start
 * (the view model only ever moves forward). */
static void seek(struct app *a, int64_t delta_ms)
{
        uint64_t end, at = replay_position(a, &end), target;
        char p[16], e[16];

        target = delta_ms < 0 && (uint64_t)-delta_ms > at ? 0 : at + (uint64_t)delta_ms;
        if (target > end)
                target = end;
        if (target < at) {
                struct viewmodel *vm = viewmodel_new();
                if (vm == NULL)
                        return;
                viewmodel_set_readonly(vm, true);
                viewmodel_free(a->vm);
                a->vm = vm;
                app_reset_view(a);
                a->next = 0;
        }
        while (a->next < a->nevents && event_ms(a->events[a->next]) <= target)
                viewmodel_event(a->events[a->next++], a->vm);
        fmt_ms(p, sizeof(p), replay_position(a, NULL));
        fmt_ms(e, sizeof(e), end);
        snprintf(a->status, sizeof(a->status), "replay at %s of %s", p, e);
        if (!a->paused)
                uv_timer_start(&a->play, replay_next, 0, 0);
}

bool replay_code_key(struct app *a, wint_t ch)
{
        if (ch == KEY_LEFT || ch == KEY_RIGHT) {
                seek(a, ch == KEY_LEFT ? -10000 : 10000);
                return true;
        }
        return false;
}

/* Speeds from 1/8 to 64 times as recorded; 0 is "max" (all at once). */
static void change_speed(struct app *a, bool faster)
{
        if (a->speed == 0)
                a->speed = faster ? 0 : 64;
        else if (faster)
                a->speed = a->speed >= 64 ? 0 : a->speed * 2;
        else if (a->speed > 0.125)
                a->speed /= 2;
        if (a->speed == 0)
                snprintf(a->status, sizeof(a->status), "replay speed: max");
        else
                snprintf(a->status, sizeof(a->status), "replay speed: x%g", a->speed);
        if (!a->paused)
                uv_timer_start(&a->play, replay_next, 0, 0);
}

/* Replay keys; true when the key was taken (or refused: read-only). */
bool replay_key(struct app *a, wint_t ch)
{
        switch (ch) {
        case '+':
        case '-':
                change_speed(a, ch == '+');
                return true;
        case ' ':
                a->paused = !a->paused;
                if (a->paused)
                        uv_timer_stop(&a->play);
                else
                        uv_timer_start(&a->play, replay_next, 0, 0);
                return true;
        case 's':
                if (a->paused && a->next < a->nevents)
                        viewmodel_event(a->events[a->next++], a->vm);
                return true;
        case 'm':
        case 'k':
        case 'p':
        case 'K':
        case 'i':
        case 'n':
                snprintf(a->status, sizeof(a->status),
                         "replay is read-only: no mode flip, kill or prompt");
                return true;
        case 27:
                if (!a->detail.open)
                        return true;
                return false;
        }
        return false;
}
