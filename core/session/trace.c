/* trace: writes a session's events to a JSONL file and summarises one.
 * The writer holds nothing in a buffer (a killed proctor loses no event)
 * and never lets an API key through; the summary never trusts its input. */
#include "core/session/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util/buf.h"
#include "core/session/config.h"
#include "core/session/options.h"
#include "core/model/chat.h"
#include "core/model/provider.h"
#include "exec/native/env.h"

#define REDACTED       "[redacted]"
#define MIN_REDACT_LEN 8

struct trace {
        int fd;
        int status;
        char *path;
        char *session_id; /* of a default path, NULL for --trace's */
        char *buf;        /* one line, reused */
        size_t len, cap;
        bool regular; /* a regular file: a cut line can be taken back */
        bool cut;     /* ...but could not be */
        off_t size;   /* bytes of the whole lines written */
        uint64_t lines;
        char error[PATH_MAX + 160];
};

/* ---- writing ---- */

static bool valid_session_id(const char *id)
{
        size_t i;

        if (id == NULL || id[0] == '\0' || id[0] == '.' || strlen(id) > 128)
                return false;
        for (i = 0; id[i] != '\0'; i++)
                if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
                           id[i]) == NULL)
                        return false;
        return true;
}

/* mkdir -p, each missing directory with `mode`. */
static int make_dirs(char *path, mode_t mode)
{
        char *p;

        for (p = path + 1;; p++) {
                char c = *p;

                if (c != '/' && c != '\0')
                        continue;
                *p = '\0';
                if (mkdir(path, mode) < 0 && errno != EEXIST) {
                        int rc = -errno;
                        *p = c;
                        return rc;
                }
                *p = c;
                if (c == '\0')
                        return 0;
        }
}

/* -EPERM, with err saying so, when `st` belongs to another user: traces
 * hold tool output, so they live only in what is the operator's own. */
static int refuse_foreign(const struct stat *st, const char *shown, const char *refusing, char *err,
                          size_t errlen)
{
        if (st->st_uid == geteuid())
                return 0;
        snprintf(err, errlen, "%s: owned by uid %u, not by you (uid %u); refusing to %s", shown,
                 (unsigned)st->st_uid, (unsigned)geteuid(), refusing);
        return -EPERM;
}

/* Makes (0700) and opens the directory `name` in `dirfd`, refusing a
 * symbolic link and a directory of another user's: either could send the
 * traces, and the tool output in them, where someone else reads them. */
static int own_dir(int dirfd, const char *name, const char *shown, char *err, size_t errlen)
{
        struct stat st;
        int fd, rc;

        if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST) {
                rc = -errno;
                snprintf(err, errlen, "%s: %s", shown, strerror(-rc));
                return rc;
        }
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                rc = -errno;
                /* O_DIRECTORY says ENOTDIR of a link: the caller hears ELOOP */
                if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
                        rc = -ELOOP;
                        snprintf(err, errlen,
                                 "%s: is a symbolic link; refusing to keep traces through it "
                                 "(make it a directory of your own)",
                                 shown);
                } else {
                        snprintf(err, errlen, "%s: %s", shown, strerror(-rc));
                }
                return rc;
        }
        if (fstat(fd, &st) < 0) {
                rc = -errno;
                snprintf(err, errlen, "%s: %s", shown, strerror(-rc));
                close(fd);
                return rc;
        }
        if ((rc = refuse_foreign(&st, shown, "keep traces there", err, errlen)) < 0) {
                close(fd);
                return rc;
        }
        return fd;
}

/* Opens $XDG_STATE_HOME/proctor/sessions, whose path is in `dir`: the
 * directories above proctor/ are the user's business and are only made
 * when missing; proctor/ and sessions/ are proctor's own and are checked. */
static int sessions_dir(char *dir, char *err, size_t errlen)
{
        char *sess = strrchr(dir, '/');
        char *prod;
        int base, fd, rc;

        *sess = '\0';
        prod = strrchr(dir, '/');
        *prod = '\0';
        rc = make_dirs(dir, 0700);
        base = rc < 0 ? rc : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (base < 0) {
                rc = rc < 0 ? rc : -errno;
                snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
                *prod = '/';
                *sess = '/';
                return rc;
        }
        *prod = '/';
        fd = own_dir(base, prod + 1, dir, err, errlen);
        close(base);
        *sess = '/';
        if (fd < 0)
                return fd;
        rc = own_dir(fd, sess + 1, dir, err, errlen);
        close(fd);
        return rc;
}

/* Creates $XDG_STATE_HOME/proctor/sessions/<id>.jsonl, a new file: never
 * one that exists, nor one reached through a symbolic link. Without
 * `create` only the path and the directories: 0 when they will do. */
static int open_default(const char *session_id, bool create, char *path, size_t len, char *err,
                        size_t errlen)
{
        char name[160];
        size_t n;
        int dfd, fd, rc;

        if (!valid_session_id(session_id)) {
                snprintf(err, errlen, "bad session id for a trace file name");
                return -EINVAL;
        }
        rc = config_xdg_path("XDG_STATE_HOME", ".local/state", "proctor/sessions", path, len);
        if (rc < 0) {
                snprintf(err, errlen, "no directory for traces (set XDG_STATE_HOME)");
                return rc;
        }
        snprintf(name, sizeof(name), "%s.jsonl", session_id);
        n = strlen(path);
        if ((size_t)snprintf(path + n, len - n, "/%s", name) >= len - n) {
                snprintf(err, errlen, "%s: path too long", path);
                return -ENAMETOOLONG;
        }
        path[n] = '\0';
        dfd = sessions_dir(path, err, errlen);
        if (dfd < 0)
                return dfd;
        path[n] = '/';
        if (!create) {
                close(dfd);
                return 0;
        }
        fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC,
                    0600);
        rc = fd < 0 ? -errno : 0;
        close(dfd);
        if (rc == -EEXIST) /* a session id is never reused: someone planted it */
                snprintf(err, errlen, "%s: already exists; refusing to reuse it", path);
        else if (rc < 0)
                snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        return rc < 0 ? rc : fd;
}

/* Opens the --trace file. One trace file holds one session, so an existing
 * one is emptied (the supervisor reuses it for each new session), but never
 * through a symbolic link, and never someone else's file. */
static int open_explicit(const char *path, bool create, char *err, size_t errlen)
{
        struct stat st;
        int fd, rc;

        if (!create) { /* the refusals below, without touching the file */
                if (lstat(path, &st) < 0)
                        return 0;
                if (S_ISLNK(st.st_mode)) {
                        snprintf(err, errlen, "%s: is a symbolic link; refusing to follow it",
                                 path);
                        return -ELOOP;
                }
                return S_ISREG(st.st_mode) ? refuse_foreign(&st, path, "overwrite it", err, errlen)
                                           : 0;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) {
                rc = -errno;
                if (rc == -ELOOP)
                        snprintf(err, errlen, "%s: is a symbolic link; refusing to follow it",
                                 path);
                else
                        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
                return rc;
        }
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
                if ((rc = refuse_foreign(&st, path, "overwrite it", err, errlen)) < 0) {
                        close(fd);
                        return rc;
                }
                /* A file that existed may be readable by others; a trace
                 * holds tool output, so it is the operator's alone (pipes
                 * and ttys are left as they are). */
                if (ftruncate(fd, 0) < 0 || ((st.st_mode & 077) != 0 && fchmod(fd, 0600) < 0)) {
                        rc = -errno;
                        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
                        close(fd);
                        return rc;
                }
        }
        return fd;
}

/* Makes (or empties) the file; from here on events go to it. */
static int make_file(struct trace *t, char *err, size_t errlen)
{
        char buf[PATH_MAX];
        struct stat st;
        int fd = t->session_id == NULL
                     ? open_explicit(t->path, true, err, errlen)
                     : open_default(t->session_id, true, buf, sizeof(buf), err, errlen);

        if (fd < 0)
                return fd;
        t->fd = fd;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
                t->regular = true;
                t->size = st.st_size;
        }
        return 0;
}

int trace_prepare(const char *path, const char *session_id, struct trace **out, char *err,
                  size_t errlen)
{
        char buf[PATH_MAX];
        struct trace *t;
        int rc;

        rc = path == NULL ? open_default(session_id, false, buf, sizeof(buf), err, errlen)
                          : open_explicit(path, false, err, errlen);
        if (rc < 0)
                return rc;
        t = calloc(1, sizeof(*t));
        if (t == NULL || (t->path = strdup(path != NULL ? path : buf)) == NULL ||
            (path == NULL && (t->session_id = strdup(session_id)) == NULL)) {
                if (t != NULL)
                        free(t->path);
                free(t);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        t->fd = -1;
        *out = t;
        return 0;
}

int trace_open(const char *path, const char *session_id, struct trace **out, char *err,
               size_t errlen)
{
        int rc = trace_prepare(path, session_id, out, err, errlen);

        if (rc == 0 && (rc = make_file(*out, err, errlen)) < 0) {
                trace_close(*out);
                *out = NULL;
        }
        return rc;
}

const char *trace_path(const struct trace *t)
{
        return t->path;
}

int trace_status(const struct trace *t)
{
        return t->status;
}

const char *trace_error(const struct trace *t)
{
        return t->error;
}

void trace_close(struct trace *t)
{
        if (t == NULL)
                return;
        if (t->fd >= 0)
                close(t->fd);
        free(t->buf);
        free(t->path);
        free(t->session_id);
        free(t);
}

/* The API key values in the environment now (a key may be set late), as
 * the provider sends them: without a trailing newline. */
struct keys {
        const char *v[3];
        size_t len[3];
        int n;
};

static void keys_load(struct keys *k)
{
        static const char *const vars[] = {"PROCTOR_API_KEY", "OPENAI_API_KEY", "HF_TOKEN"};
        size_t i;

        k->n = 0;
        for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
                const char *v = getenv(vars[i]);
                if (v != NULL && provider_key_length(v) > 0) {
                        k->v[k->n] = v;
                        k->len[k->n++] = provider_key_length(v);
                }
        }
}

enum leak { LEAK_NONE, LEAK_INSIDE, LEAK_EQUAL };

static enum leak string_leak(const json_t *s, const struct keys *k)
{
        const char *v = json_string_value(s);
        size_t n = json_string_length(s);
        enum leak l = LEAK_NONE;
        int i;

        for (i = 0; i < k->n; i++) {
                if (n == k->len[i] && memcmp(v, k->v[i], n) == 0)
                        return LEAK_EQUAL;
                if (k->len[i] >= MIN_REDACT_LEN && memmem(v, n, k->v[i], k->len[i]) != NULL)
                        l = LEAK_INSIDE;
        }
        return l;
}

/* Numbers and booleans carry no credential: "prompt_tokens": 812 stays.
 * An HTTP Authorization header is a credential whatever its name says. */
static bool secret_member(const char *name, const json_t *v)
{
        return (json_is_string(v) || json_is_object(v) || json_is_array(v)) &&
               (env_is_secret(name) || strcasecmp(name, "authorization") == 0);
}

static bool needs_scrub(const json_t *v, const struct keys *k)
{
        const char *name;
        json_t *m;
        size_t i;

        switch (json_typeof(v)) {
        case JSON_OBJECT:
                json_object_foreach ((json_t *)v, name, m) {
                        if (secret_member(name, m) || needs_scrub(m, k))
                                return true;
                }
                return false;
        case JSON_ARRAY:
                for (i = 0; i < json_array_size(v); i++)
                        if (needs_scrub(json_array_get(v, i), k))
                                return true;
                return false;
        case JSON_STRING:
                return string_leak(v, k) != LEAK_NONE;
        default:
                return false;
        }
}

/* Replaces every occurrence of each key in the string s with REDACTED. */
static void redact_string(json_t *s, const struct keys *k)
{
        char *cur = strndup(json_string_value(s), json_string_length(s)), *next;
        size_t n = json_string_length(s);
        int i;

        for (i = 0; cur != NULL && i < k->n; i++) {
                const char *p, *from = cur;
                size_t o = 0;

                if (k->len[i] < MIN_REDACT_LEN)
                        continue;
                /* at most n / len occurrences, each replaced by REDACTED */
                next = malloc(n + (n / k->len[i]) * sizeof(REDACTED) + 1);
                if (next == NULL)
                        break;
                while ((p = memmem(from, n - (size_t)(from - cur), k->v[i], k->len[i])) != NULL) {
                        memcpy(next + o, from, (size_t)(p - from));
                        o += (size_t)(p - from);
                        memcpy(next + o, REDACTED, sizeof(REDACTED) - 1);
                        o += sizeof(REDACTED) - 1;
                        from = p + k->len[i];
                }
                memcpy(next + o, from, n - (size_t)(from - cur));
                o += n - (size_t)(from - cur);
                free(cur);
                cur = next;
                n = o;
        }
        if (cur != NULL)
                json_string_setn(s, cur, n);
        else
                json_string_set(s, REDACTED);
        free(cur);
}

static void scrub(json_t *v, const struct keys *k)
{
        const char *name;
        json_t *m;
        void *tmp;
        size_t i;

        switch (json_typeof(v)) {
        case JSON_OBJECT:
                json_object_foreach_safe (v, tmp, name, m) {
                        if (secret_member(name, m) ||
                            (json_is_string(m) && string_leak(m, k) == LEAK_EQUAL))
                                json_object_del(v, name);
                        else
                                scrub(m, k);
                }
                break;
        case JSON_ARRAY:
                for (i = 0; i < json_array_size(v); i++) {
                        m = json_array_get(v, i);
                        if (json_is_string(m) && string_leak(m, k) == LEAK_EQUAL)
                                json_array_set_new(v, i, json_string(REDACTED));
                        else
                                scrub(m, k);
                }
                break;
        case JSON_STRING:
                if (string_leak(v, k) == LEAK_INSIDE)
                        redact_string(v, k);
                break;
        default:
                break;
        }
}

static int append(const char *buf, size_t n, void *ud)
{
        struct trace *t = ud;

        if (buf_reserve(&t->buf, &t->cap, t->len, n, 4096) < 0)
                return -1;
        memcpy(t->buf + t->len, buf, n);
        t->len += n;
        return 0;
}

/* A full disk can take part of a line and refuse the rest: the part is
 * taken back, so that the trace stays whole JSON lines up to the failure. */
static int write_line(struct trace *t)
{
        const char *p = t->buf;
        size_t n = t->len;

        /* One call writes the whole line; the loop only continues a write
         * that the kernel cut short. */
        while (n > 0) {
                ssize_t w = write(t->fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        int rc = -errno;
                        if (t->regular && n < t->len && ftruncate(t->fd, t->size) < 0)
                                t->cut = true; /* replay will report the line */
                        return rc;
                }
                p += w;
                n -= (size_t)w;
        }
        t->size += (off_t)t->len;
        t->lines++;
        return 0;
}

/* The first failure ends the trace: a later, smaller event that fits
 * would leave a hole no reader could see. */
static void fail_at(struct trace *t, const json_t *ev, int rc, const char *cause)
{
        const char *type = json_string_value(json_object_get(ev, "type"));
        long long seq = (long long)json_integer_value(json_object_get(ev, "seq"));

        t->status = rc;
        if (cause != NULL) /* the file could not be made: cause names it */
                snprintf(t->error, sizeof(t->error),
                         "trace %s: not recorded from event %lld (%s) on", cause, seq,
                         type != NULL ? type : "?");
        else
                snprintf(t->error, sizeof(t->error),
                         "trace %s: %s at event %lld (%s): not recorded from there on (%llu "
                         "events kept%s)",
                         t->path, strerror(-rc), seq, type != NULL ? type : "?",
                         (unsigned long long)t->lines, t->cut ? ", then a cut line" : "");
}

json_t *trace_redacted(const json_t *event)
{
        struct keys k;
        json_t *copy;

        keys_load(&k);
        if (!needs_scrub(event, &k))
                return json_incref((json_t *)event);
        if ((copy = json_deep_copy(event)) != NULL)
                scrub(copy, &k);
        return copy;
}

void trace_event(const json_t *event, void *ud)
{
        struct trace *t = ud;
        const json_t *ev = event;
        json_t *copy = NULL;
        struct keys k;
        int rc;

        if (t->status < 0)
                return;
        if (t->fd < 0) {
                char cause[PATH_MAX + 100];
                if ((rc = make_file(t, cause, sizeof(cause))) < 0) {
                        fail_at(t, event, rc, cause);
                        return;
                }
        }
        keys_load(&k);
        if (needs_scrub(event, &k)) {
                copy = json_deep_copy(event);
                if (copy == NULL) {
                        rc = -ENOMEM;
                        goto out;
                }
                scrub(copy, &k);
                ev = copy;
        }
        t->len = 0;
        if (json_dump_callback(ev, append, t, JSON_COMPACT) < 0 || append("\n", 1, t) < 0)
                rc = -ENOMEM;
        else
                rc = write_line(t);
out:
        if (rc < 0)
                fail_at(t, event, rc, NULL);
        json_decref(copy);
}

/* ---- the summary ---- */

struct summary {
        const char *file;
        json_t *events;                  /* the events the summary shows, in order */
        json_t *results;                 /* call_id -> tool.result */
        json_t *execs;                   /* call_id -> [exec_id key] */
        json_t *exits;                   /* exec_id key -> exec.exit */
        json_t *kills;                   /* exec_id key -> operator.kill */
        json_t *decisions;               /* call_id -> approval.decision */
        unsigned asked, allowed, denied; /* approval requests, decisions */
        json_t *start, *end;             /* the last of each */
        json_int_t last_ms;
        unsigned lines, bad, turns, calls;
        bool in_turn;
        char pending[170]; /* a user message waiting for its turn */
};

/* call_id and exec_id may be strings or integers; both index as text. */
static const char *id_key(const json_t *v, char *buf, size_t len)
{
        if (json_is_string(v))
                return json_string_value(v);
        if (json_is_integer(v)) {
                snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                return buf;
        }
        return NULL;
}

static const char *str_field(const json_t *ev, const char *name)
{
        return json_string_value(json_object_get(ev, name));
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
        size_t len, i;

        if (s[0] < 0x80)
                return 1;
        len = s[0] >= 0xc2 && s[0] < 0xe0   ? 2
              : s[0] >= 0xe0 && s[0] < 0xf0 ? 3
              : s[0] >= 0xf0 && s[0] < 0xf5 ? 4
                                            : 0;
        if (len == 0 || len > n)
                return 0;
        for (i = 1; i < len; i++)
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
        return len;
}

/* Untrusted text as one terminal-safe line of at most max (>= 4)
 * characters: line breaks and tabs become spaces; other control characters
 * (C0, DEL, C1) and bytes that are not UTF-8 become '?'; a longer text ends
 * in "...". Returns the number of characters written. */
static size_t clip(const char *s, size_t n, size_t max, char *out, size_t outlen)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0, o = 0, chars = 0;

        while (i < n && chars < max && o + 8 < outlen) {
                size_t len = utf8_seq(u + i, n - i);

                if (chars == max - 3) {
                        /* room for "..." only, unless the rest fits */
                        size_t rest = 0, j;
                        for (j = i; j < n && rest <= 3; j++)
                                rest += (u[j] & 0xc0) != 0x80;
                        if (rest > 3) {
                                memcpy(out + o, "...", 3);
                                o += 3;
                                chars += 3;
                                break;
                        }
                }
                if (u[i] == '\n' || u[i] == '\t' || u[i] == '\r') {
                        out[o++] = ' ';
                } else if (len == 0 || u[i] < 0x20 || u[i] == 0x7f ||
                           (u[i] == 0xc2 && u[i + 1] < 0xa0)) {
                        out[o++] = '?';
                } else {
                        memcpy(out + o, s + i, len);
                        o += len;
                }
                i += len > 0 ? len : 1;
                chars++;
        }
        out[o] = '\0';
        return chars;
}

static size_t clip_str(const char *s, size_t max, char *out, size_t outlen)
{
        return clip(s != NULL ? s : "", s != NULL ? strlen(s) : 0, max, out, outlen);
}

static void fmt_ms(json_int_t ms, char *buf, size_t len)
{
        if (ms < 0)
                snprintf(buf, len, "-");
        else if (ms < 1000)
                snprintf(buf, len, "%" JSON_INTEGER_FORMAT "ms", ms);
        else if (ms < 60000)
                snprintf(buf, len, "%.1fs", (double)ms / 1000.0);
        else
                snprintf(buf, len, "%" JSON_INTEGER_FORMAT "m%02" JSON_INTEGER_FORMAT "s",
                         ms / 60000, ms / 1000 % 60);
}

static json_int_t int_field(const json_t *ev, const char *name, json_int_t dflt)
{
        const json_t *v = json_object_get(ev, name);

        return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* Files the event under its ids; false when the summary does not show it. */
static bool index_event(struct summary *s, json_t *ev, const char *type)
{
        char buf[32];
        const char *id;

        if (strcmp(type, "tool.result") == 0) {
                id = id_key(json_object_get(ev, "call_id"), buf, sizeof(buf));
                json_object_del(ev, "output"); /* up to 25,000 characters, not shown */
                if (id != NULL)
                        json_object_set(s->results, id, ev);
                return false;
        }
        if (strcmp(type, "exec.create") == 0) {
                char ebuf[32];
                const char *eid = id_key(json_object_get(ev, "exec_id"), ebuf, sizeof(ebuf));
                json_t *list;

                id = id_key(json_object_get(ev, "call_id"), buf, sizeof(buf));
                if (id == NULL || eid == NULL)
                        return false;
                list = json_object_get(s->execs, id);
                if (list == NULL) {
                        list = json_array();
                        json_object_set_new(s->execs, id, list);
                }
                json_array_append_new(list, json_string(eid));
                return false;
        }
        if (strcmp(type, "approval.request") == 0) {
                s->asked++;
                return false;
        }
        if (strcmp(type, "approval.decision") == 0) {
                id = id_key(json_object_get(ev, "call_id"), buf, sizeof(buf));
                if (id != NULL)
                        json_object_set(s->decisions, id, ev);
                if (json_is_string(json_object_get(ev, "decision"))) {
                        if (strcmp(str_field(ev, "decision"), "deny") == 0)
                                s->denied++;
                        else
                                s->allowed++;
                }
                return false;
        }
        if (strcmp(type, "exec.exit") == 0 || strcmp(type, "operator.kill") == 0) {
                id = id_key(json_object_get(ev, "exec_id"), buf, sizeof(buf));
                if (id != NULL)
                        json_object_set(strcmp(type, "exec.exit") == 0 ? s->exits : s->kills, id,
                                        ev);
                return false;
        }
        if (strcmp(type, "model.message") == 0) {
                /* shown only when it ended unusually or refused */
                json_object_del(ev, "content");
                json_object_del(ev, "tool_calls");
                return json_is_true(json_object_get(ev, "refusal")) ||
                       chat_finish_note(str_field(ev, "finish_reason"), buf, 0);
        }
        if (strcmp(type, "session.start") == 0) {
                json_decref(s->start);
                s->start = json_incref(ev);
        } else if (strcmp(type, "session.end") == 0) {
                json_decref(s->end);
                s->end = json_incref(ev);
        }
        return strcmp(type, "user.message") == 0 || strcmp(type, "turn.start") == 0 ||
               strcmp(type, "turn.end") == 0 || strcmp(type, "tool.call") == 0 ||
               strcmp(type, "operator.interrupt") == 0 || strcmp(type, "model.error") == 0;
}

static void read_line(struct summary *s, char *line, size_t n)
{
        bool complete = n > 0 && line[n - 1] == '\n';
        json_error_t jerr;
        const char *type;
        json_t *ev;
        size_t i;

        s->lines++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                n--;
        for (i = 0; i < n && (line[i] == ' ' || line[i] == '\t'); i++)
                ;
        if (i == n)
                return;
        ev = json_loadb(line, n, 0, &jerr);
        if (ev == NULL) {
                char why[160];

                clip_str(jerr.text, 100, why, sizeof(why));
                fprintf(stderr, "%s:%u: not valid JSON (%s%s)\n", s->file, s->lines,
                        complete ? "" : "truncated last line: ", why);
                s->bad++;
                return;
        }
        type = str_field(ev, "type");
        if (!json_is_object(ev) || type == NULL) {
                fprintf(stderr, "%s:%u: not an event (no \"type\")\n", s->file, s->lines);
                s->bad++;
                json_decref(ev);
                return;
        }
        if (int_field(ev, "t_ms", -1) > s->last_ms)
                s->last_ms = int_field(ev, "t_ms", -1);
        if (index_event(s, ev, type))
                json_array_append(s->events, ev);
        json_decref(ev);
}

/* "exec 3 exited 1", "exec 4 killed by the operator", ... */
static void describe_exec(const struct summary *s, const char *eid, char *buf, size_t len)
{
        const json_t *x = json_object_get(s->exits, eid);
        const char *reason = str_field(x, "reason");
        char what[128], t[32];

        if (x == NULL || reason == NULL) {
                snprintf(buf, len, "exec %s no exit recorded", eid);
                return;
        }
        if (strcmp(reason, "exited") == 0) {
                snprintf(what, sizeof(what), "exited %" JSON_INTEGER_FORMAT,
                         int_field(x, "exit_code", -1));
        } else if (strcmp(reason, "signaled") == 0) {
                int sig = (int)int_field(x, "signal", 0);
                const char *abbrev = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;
                snprintf(what, sizeof(what), "signaled SIG%s", abbrev != NULL ? abbrev : "?");
        } else if (strcmp(reason, "killed") == 0) {
                snprintf(what, sizeof(what), "killed%s",
                         json_object_get(s->kills, eid) != NULL ? " by the operator" : "");
        } else if (strcmp(reason, "timeout") == 0) {
                fmt_ms(int_field(x, "wall_ms", -1), t, sizeof(t));
                snprintf(what, sizeof(what), "timeout after %s", t);
        } else if (strcmp(reason, "setup_failed") == 0) {
                char e[64];
                clip_str(str_field(x, "error"), 60, e, sizeof(e));
                snprintf(what, sizeof(what), "setup_failed%s%s", e[0] ? ": " : "", e);
        } else {
                clip_str(reason, 20, what, sizeof(what));
        }
        snprintf(buf, len, "exec %s %s", eid, what);
}

/* Every execution a call ran, "; "-separated. */
static void describe_execs(const struct summary *s, const json_t *execs, char *buf, size_t len)
{
        size_t i, o = 0;

        buf[0] = '\0';
        for (i = 0; i < json_array_size(execs) && o + 2 < len; i++) {
                if (o > 0)
                        o += (size_t)snprintf(buf + o, len - o, "; ");
                describe_exec(s, json_string_value(json_array_get(execs, i)), buf + o, len - o);
                o = strlen(buf);
        }
}

static void pad(size_t used, size_t width)
{
        printf("%*s", used < width ? (int)(width - used) : 0, "");
}

/* Under a call the operator decided or a rule denied: who, and a denial's
 * reason ("denied by the operator: not the build dir"). */
static void print_decision(const json_t *dec, bool denied)
{
        char by[32], rule[128], reason[260], added[128];

        clip_str(str_field(dec, "by"), 20, by, sizeof(by));
        clip_str(str_field(dec, "rule"), 100, rule, sizeof(rule));
        clip_str(str_field(dec, "reason"), 200, reason, sizeof(reason));
        clip_str(str_field(dec, "rule_added"), 100, added, sizeof(added));
        if (!denied && strcmp(by, "operator") != 0)
                return; /* a rule's allow: the row says enough */
        printf("       %s by the %s", denied ? "denied" : "allowed", by[0] ? by : "?");
        if (rule[0])
                printf(" (rule %s)", rule);
        if (json_is_string(json_object_get(dec, "arguments")))
                printf(", arguments edited");
        if (added[0])
                printf(", rule added: %s", added);
        if (denied)
                printf(": %s", reason[0] ? reason : "no reason given");
        printf("\n");
}

static void print_call(struct summary *s, const json_t *call)
{
        char name[64], args[256], dur[32], buf[32], ex[512];
        const json_t *a = json_object_get(call, "arguments");
        const char *id = id_key(json_object_get(call, "call_id"), buf, sizeof(buf));
        const json_t *res = id != NULL ? json_object_get(s->results, id) : NULL;
        const json_t *dec = id != NULL ? json_object_get(s->decisions, id) : NULL;
        const char *decision = dec != NULL ? str_field(dec, "decision") : NULL;
        bool denied = decision != NULL && strcmp(decision, "deny") == 0;
        const char *outcome = "no result";
        json_int_t ms = -1;
        size_t w, namew;

        s->calls++;
        namew = clip_str(str_field(call, "name"), 16, name, sizeof(name));
        if (json_is_string(a)) {
                w = clip(json_string_value(a), json_string_length(a), 60, args, sizeof(args));
        } else {
                char *dump = a != NULL ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
                w = clip_str(dump, 60, args, sizeof(args));
                free(dump);
        }
        if (res != NULL) {
                outcome = json_is_true(json_object_get(res, "ok")) ? "ok" : "error";
                ms = int_field(res, "duration_ms", -1);
                if (ms < 0 && int_field(call, "t_ms", -1) >= 0)
                        ms = int_field(res, "t_ms", -1) - int_field(call, "t_ms", -1);
        }
        fmt_ms(ms, dur, sizeof(dur));
        describe_execs(s, id != NULL ? json_object_get(s->execs, id) : NULL, ex, sizeof(ex));
        printf("  %3u  %s", s->calls, name);
        pad(namew, 16);
        printf("  %s", args);
        pad(w, 60);
        printf("  %7s  %-9s  %s\n", dur, denied ? "denied" : outcome, ex);
        if (dec != NULL)
                print_decision(dec, denied);
}

static void print_start(const json_t *ev)
{
        char id[80], mode[32], model[80], ws[120];

        clip_str(str_field(ev, "session_id"), 64, id, sizeof(id));
        clip_str(str_field(ev, "mode"), 16, mode, sizeof(mode));
        clip_str(str_field(ev, "model"), 64, model, sizeof(model));
        clip_str(str_field(ev, "workspace"), 100, ws, sizeof(ws));
        printf("session %s: mode %s, model %s, workspace %s\n", id[0] ? id : "?",
               mode[0] ? mode : "?", model[0] ? model : "?", ws[0] ? ws : "?");
}

static void print_header(void)
{
        printf("\n    #  %-16s  %-60s  %7s  %-9s  %s\n", "tool", "arguments", "time", "outcome",
               "execution");
}

static void print_turn(struct summary *s, const json_t *ev)
{
        s->turns++;
        s->in_turn = true;
        printf("\nturn %" JSON_INTEGER_FORMAT, int_field(ev, "turn", s->turns));
        if (s->pending[0] != '\0')
                printf(": %s", s->pending);
        printf("\n");
        s->pending[0] = '\0';
}

static void print_user(struct summary *s, const json_t *ev)
{
        char text[160];

        clip_str(str_field(ev, "text"), 100, text, sizeof(text));
        if (s->in_turn) {
                printf("       user: %s\n", text);
                return;
        }
        if (s->pending[0] != '\0')
                printf("\nuser (no turn followed): %s\n", s->pending);
        snprintf(s->pending, sizeof(s->pending), "\"%s\"", text);
}

static void print_model_error(const json_t *ev)
{
        char msg[128], retry[32];
        json_int_t status = int_field(ev, "http_status", 0);
        json_int_t in = int_field(ev, "retry_in_ms", -1);

        clip_str(str_field(ev, "message"), 100, msg, sizeof(msg));
        fmt_ms(in, retry, sizeof(retry));
        printf("       model error: ");
        if (status > 0 && strncmp(msg, "HTTP ", 5) != 0)
                printf("HTTP %" JSON_INTEGER_FORMAT ": ", status);
        printf("%s%s%s%s\n", msg, in >= 0 ? " (retry in " : "", in >= 0 ? retry : "",
               in >= 0 ? ")" : "");
}

static void print_model_ending(const json_t *ev)
{
        char note[160];

        if (json_is_true(json_object_get(ev, "refusal")))
                printf("       model: refused\n");
        if (chat_finish_note(str_field(ev, "finish_reason"), note, sizeof(note)))
                printf("       model: %s\n", note);
}

static void print_usage(const json_t *usage)
{
        const char *name;
        const json_t *v;
        char n[48];
        int k = 0;

        json_object_foreach ((json_t *)usage, name, v) {
                if (!json_is_integer(v))
                        continue;
                clip_str(name, 40, n, sizeof(n));
                printf("%s%s %" JSON_INTEGER_FORMAT, k++ ? ", " : "usage: ", n,
                       json_integer_value(v));
        }
        printf("%s\n", k ? "" : "usage: not recorded");
}

static void print_end(const struct summary *s)
{
        const json_t *e = s->end;
        char status[40], dur[32];

        printf("\n");
        if (e == NULL) {
                fmt_ms(s->last_ms, dur, sizeof(dur));
                printf("session end: not recorded (the trace stops at %s; %u turns, %u tool "
                       "calls seen)\n",
                       dur, s->turns, s->calls);
                return;
        }
        clip_str(str_field(e, "status"), 30, status, sizeof(status));
        fmt_ms(int_field(e, "duration_ms", s->last_ms), dur, sizeof(dur));
        printf("session end: %s, %" JSON_INTEGER_FORMAT " turns, %" JSON_INTEGER_FORMAT
               " tool calls, %s\n",
               status[0] ? status : "?", int_field(e, "turns", s->turns),
               int_field(e, "tool_calls", s->calls), dur);
        print_usage(json_object_get(e, "usage"));
}

static void print_approvals(const struct summary *s)
{
        if (s->asked > 0 || s->denied > 0)
                printf("approvals: %u asked, %u allowed, %u denied\n", s->asked, s->allowed,
                       s->denied);
}

static void print_summary(struct summary *s)
{
        size_t i;
        json_t *ev;

        printf("trace %s\n", s->file);
        if (s->start != NULL)
                print_start(s->start);
        else
                printf("session: start not recorded\n");
        print_header();
        json_array_foreach (s->events, i, ev) {
                const char *type = str_field(ev, "type");

                if (strcmp(type, "turn.start") == 0)
                        print_turn(s, ev);
                else if (strcmp(type, "turn.end") == 0)
                        s->in_turn = false;
                else if (strcmp(type, "user.message") == 0)
                        print_user(s, ev);
                else if (strcmp(type, "tool.call") == 0)
                        print_call(s, ev);
                else if (strcmp(type, "operator.interrupt") == 0)
                        printf("       interrupted by the operator\n");
                else if (strcmp(type, "model.error") == 0)
                        print_model_error(ev);
                else if (strcmp(type, "model.message") == 0)
                        print_model_ending(ev);
        }
        if (s->pending[0] != '\0')
                printf("\nuser (no turn followed): %s\n", s->pending);
        print_end(s);
        print_approvals(s);
        if (s->bad > 0)
                printf("skipped %u unreadable line%s of %u (see stderr)\n", s->bad,
                       s->bad == 1 ? "" : "s", s->lines);
}

static int usage_error(const char *msg)
{
        fprintf(stderr, "proctor replay: %s\n", msg);
        fprintf(stderr, "usage: proctor replay --summary TRACE\n");
        return 2;
}

int trace_summary_main(int argc, char **argv)
{
        struct summary s = {0};
        struct options o;
        char err[512], *line = NULL;
        size_t cap = 0;
        ssize_t n;
        struct stat st;
        FILE *f;

        options_builtin(&o);
        if (options_parse(argc, argv, &o, err, sizeof(err)) < 0)
                return usage_error(err);
        if (o.help) {
                printf("usage: proctor replay --summary TRACE\n\n"
                       "Prints each turn's tool calls (arguments, duration, outcome, how the\n"
                       "execution ended) and how the session ended. Exits 1 when some lines\n"
                       "of the trace could not be read.\n");
                return 0;
        }
        if (o.argi >= argc)
                return usage_error("no trace file given");
        if (o.argi + 1 < argc) {
                snprintf(err, sizeof(err), "unexpected argument '%s'", argv[o.argi + 1]);
                return usage_error(err);
        }
        s.file = argv[o.argi];
        f = fopen(s.file, "re");
        if (f == NULL || fstat(fileno(f), &st) < 0 || S_ISDIR(st.st_mode)) {
                fprintf(stderr, "proctor replay: %s: %s\n", s.file,
                        f == NULL ? strerror(errno) : strerror(EISDIR));
                if (f != NULL)
                        fclose(f);
                return 2;
        }
        s.events = json_array();
        s.results = json_object();
        s.execs = json_object();
        s.exits = json_object();
        s.kills = json_object();
        s.decisions = json_object();
        s.last_ms = -1;
        while ((n = getline(&line, &cap, f)) > 0)
                read_line(&s, line, (size_t)n);
        if (ferror(f)) {
                fprintf(stderr, "%s: %s\n", s.file, strerror(errno));
                s.bad++;
        }
        free(line);
        fclose(f);
        print_summary(&s);
        json_decref(s.events);
        json_decref(s.results);
        json_decref(s.execs);
        json_decref(s.exits);
        json_decref(s.kills);
        json_decref(s.decisions);
        json_decref(s.start);
        json_decref(s.end);
        return s.bad > 0 ? 1 : 0;
}
