/* resume: reads an earlier session's trace back into a conversation. The
 * trace is untrusted input: it is bounded in size, a line that is not an
 * event is skipped and counted, and whatever it holds, the conversation
 * handed on is consistent (every tool call has its result). */
#include "core/session/resume.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/model/chat.h"
#include "core/session/config.h"

#define UNFINISHED                                                                                 \
        "[proctor: this call did not finish in the earlier session, which ended before its "       \
        "result; it has no result]"

struct resume *resume_new(void)
{
        struct resume *r = calloc(1, sizeof(*r));

        if (r == NULL)
                return NULL;
        r->messages = json_array();
        r->events = json_array();
        r->open_calls = json_array();
        r->open_results = json_object();
        if (r->messages == NULL || r->events == NULL || r->open_calls == NULL ||
            r->open_results == NULL) {
                resume_free(r);
                return NULL;
        }
        return r;
}

void resume_free(struct resume *r)
{
        if (r == NULL)
                return;
        json_decref(r->start);
        json_decref(r->messages);
        json_decref(r->events);
        json_decref(r->open_calls);
        json_decref(r->open_results);
        free(r);
}

static const char *get_str(const json_t *o, const char *key)
{
        return json_string_value(json_object_get(o, key));
}

/* The results of the last assistant message's calls, in its calls' order
 * (as the agent sends them); a call without one gets one saying so. */
static void flush_calls(struct resume *r)
{
        size_t i;
        json_t *id;

        json_array_foreach (r->open_calls, i, id) {
                const char *out = get_str(r->open_results, json_string_value(id));
                if (out == NULL)
                        r->unfinished++;
                json_array_append_new(r->messages,
                                      json_pack("{s:s,s:O,s:s}", "role", "tool", "tool_call_id", id,
                                                "content", out != NULL ? out : UNFINISHED));
        }
        json_array_clear(r->open_calls);
        json_object_clear(r->open_results);
}

/* model.message as the agent appended it (chat_message_json). */
static void add_assistant(struct resume *r, const json_t *ev)
{
        const json_t *calls = json_object_get(ev, "tool_calls");
        const char *content = get_str(ev, "content");
        struct chat_message m = {.content = (char *)(content != NULL ? content : "")};
        struct chat_tool_call *tc = NULL;
        size_t i, n = 0;
        json_t *c, *msg;

        if (json_array_size(calls) > 0 &&
            (tc = calloc(json_array_size(calls), sizeof(*tc))) == NULL)
                return;
        json_array_foreach (calls, i, c) {
                const char *id = get_str(c, "id"), *name = get_str(c, "name");
                const char *args = get_str(c, "arguments");
                /* a call without an id could never be given its result */
                if (id == NULL || id[0] == '\0' || name == NULL)
                        continue;
                tc[n].id = (char *)id;
                tc[n].name = (char *)name;
                tc[n].arguments = (char *)(args != NULL ? args : "{}");
                json_array_append_new(r->open_calls, json_string(id));
                n++;
        }
        m.calls = tc;
        m.ncalls = n;
        if ((msg = chat_message_json(&m)) != NULL)
                json_array_append_new(r->messages, msg);
        free(tc);
}

static void add_result(struct resume *r, const json_t *ev)
{
        const char *id = get_str(ev, "call_id"), *out = get_str(ev, "output");
        size_t i;
        json_t *c;

        if (id == NULL || json_object_get(r->open_results, id) != NULL)
                return;
        json_array_foreach (r->open_calls, i, c)
                if (strcmp(json_string_value(c), id) == 0) {
                        json_object_set_new(r->open_results, id, json_string(out ? out : ""));
                        return;
                }
}

static void add_event(struct resume *r, json_t *ev, const char *type)
{
        const char *text = get_str(ev, "text");
        bool shown = true;

        if (strcmp(type, "session.start") == 0) {
                if (r->start == NULL)
                        r->start = json_incref(ev);
                shown = false;
        } else if (strcmp(type, "session.end") == 0) {
                r->ended = true;
                shown = false;
        } else if (strcmp(type, "user.message") == 0 || strcmp(type, "session.note") == 0) {
                /* the agent's notes to the model are user messages too */
                flush_calls(r);
                if (text != NULL)
                        json_array_append_new(
                            r->messages, json_pack("{s:s,s:s}", "role", "user", "content", text));
        } else if (strcmp(type, "model.message") == 0) {
                flush_calls(r);
                add_assistant(r, ev);
        } else if (strcmp(type, "tool.result") == 0) {
                add_result(r, ev);
        } else {
                shown = strcmp(type, "tool.call") == 0;
        }
        /* shown before the new session's events, at its start */
        if (shown && json_object_del(ev, "t_ms") >= -1)
                json_array_append(r->events, ev);
}

void resume_line(struct resume *r, const char *line, size_t n)
{
        const char *type;
        json_t *ev;
        size_t i;

        r->lines++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                n--;
        for (i = 0; i < n && (line[i] == ' ' || line[i] == '\t'); i++)
                ;
        if (i == n)
                return;
        if (n > RESUME_LINE_MAX || (ev = json_loadb(line, n, 0, NULL)) == NULL) {
                r->bad++;
                return;
        }
        type = get_str(ev, "type");
        if (!json_is_object(ev) || type == NULL)
                r->bad++;
        else
                add_event(r, ev, type);
        json_decref(ev);
}

void resume_done(struct resume *r)
{
        const char *s;
        size_t n;

        flush_calls(r);
        s = get_str(r->start, "session_id");
        snprintf(r->session_id, sizeof(r->session_id), "%s", s != NULL ? s : "");
        s = get_str(r->start, "workspace");
        snprintf(r->workspace, sizeof(r->workspace), "%s", s != NULL ? s : "");
        s = get_str(r->start, "mode_from");
        snprintf(r->mode_from, sizeof(r->mode_from), "the resumed session (there: %.160s)",
                 s != NULL ? s : "default");
        /* the label of a scripted model is its spec and " (scripted)" */
        s = get_str(r->start, "model");
        snprintf(r->model, sizeof(r->model), "%s", s != NULL ? s : "");
        n = strlen(r->model);
        if (n > 11 && strcmp(r->model + n - 11, " (scripted)") == 0)
                r->model[n - 11] = '\0';
}

/* ---- finding and reading a trace ---- */

static bool looks_like_id(const char *s)
{
        size_t i;

        if (s[0] == '\0' || s[0] == '.' || strlen(s) > 128)
                return false;
        for (i = 0; s[i] != '\0'; i++)
                if (!isalnum((unsigned char)s[i]) && strchr("._-", s[i]) == NULL)
                        return false;
        return true;
}

static int sessions_path(const char *rel, char *buf, size_t len)
{
        char sub[200];

        snprintf(sub, sizeof(sub), "proctor/sessions%s%s", rel[0] ? "/" : "", rel);
        return config_xdg_path("XDG_STATE_HOME", ".local/state", sub, buf, len);
}

/* A path names a file; anything else is a session id. */
static int find_trace(const char *what, char *path, size_t len, char *err, size_t errlen)
{
        char name[160];
        struct stat st;
        size_t n = strlen(what);

        if (strchr(what, '/') != NULL || (n > 6 && strcmp(what + n - 6, ".jsonl") == 0) ||
            stat(what, &st) == 0) {
                if ((size_t)snprintf(path, len, "%s", what) >= len) {
                        snprintf(err, errlen, "trace path too long");
                        return -ENAMETOOLONG;
                }
                return 0;
        }
        if (!looks_like_id(what)) {
                snprintf(err, errlen, "'%.100s' is neither a session id nor a trace file", what);
                return -EINVAL;
        }
        snprintf(name, sizeof(name), "%s.jsonl", what);
        if (sessions_path(name, path, len) < 0) {
                snprintf(err, errlen, "no directory for traces (set XDG_STATE_HOME)");
                return -ENOENT;
        }
        if (stat(path, &st) < 0) {
                int rc = -errno;
                snprintf(err, errlen, "no session '%s' here: %s: %s", what, path, strerror(-rc));
                return rc;
        }
        return 0;
}

/* Reads one trace file into r (without resume_done). */
static int read_trace(struct resume *r, const char *path, char *err, size_t errlen)
{
        struct stat st;
        char *line = NULL;
        size_t cap = 0, total = 0;
        ssize_t n;
        FILE *f = fopen(path, "re");
        int rc = 0;

        if (f == NULL || fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
                rc = f == NULL ? -errno : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
                snprintf(err, errlen, "cannot read the trace %s: %s", path,
                         rc == -EINVAL ? "not a regular file" : strerror(-rc));
                if (f != NULL)
                        fclose(f);
                return rc;
        }
        if ((uint64_t)st.st_size > RESUME_TRACE_MAX) {
                snprintf(err, errlen, "the trace %s is larger than %u MiB: not resumed", path,
                         RESUME_TRACE_MAX >> 20);
                fclose(f);
                return -EFBIG;
        }
        while ((n = getline(&line, &cap, f)) > 0 && total <= RESUME_TRACE_MAX) {
                total += (size_t)n;
                resume_line(r, line, (size_t)n);
        }
        if (ferror(f)) {
                rc = -EIO;
                snprintf(err, errlen, "cannot read the trace %s: %s", path, strerror(EIO));
        }
        free(line);
        fclose(f);
        return rc;
}

/* The conversations of the sessions r itself resumed, oldest first, put
 * before r's own. */
static void read_chain(struct resume *r)
{
        char seen[RESUME_DEPTH_MAX][PATH_MAX];
        const json_t *from = json_object_get(r->start, "resumed_from");
        json_t *held = NULL; /* the session.start `from` is in */
        int depth = 0;

        snprintf(seen[depth++], PATH_MAX, "%s", r->path);
        while (from != NULL && depth < RESUME_DEPTH_MAX) {
                const char *p = get_str(from, "trace");
                struct resume *e;
                char err[PATH_MAX + 100];
                bool loop = false;
                json_t *all;

                if (p == NULL)
                        break;
                for (int i = 0; i < depth; i++)
                        loop |= strcmp(seen[i], p) == 0;
                if (loop || (e = resume_new()) == NULL)
                        break;
                if (read_trace(e, p, err, sizeof(err)) < 0) {
                        snprintf(r->lost, sizeof(r->lost), "%s", p);
                        resume_free(e);
                        break;
                }
                resume_done(e);
                snprintf(seen[depth++], PATH_MAX, "%s", p);
                all = json_array();
                json_array_extend(all, e->messages);
                json_array_extend(all, r->messages);
                json_decref(r->messages);
                r->messages = all;
                r->bad += e->bad;
                r->unfinished += e->unfinished;
                json_decref(held);
                held = json_incref(e->start);
                from = json_object_get(held, "resumed_from");
                resume_free(e);
        }
        json_decref(held);
}

int resume_load(const char *what, struct resume **out, char *err, size_t errlen)
{
        struct resume *r = resume_new();
        pid_t holder;
        int rc;

        if (r == NULL) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        if ((rc = find_trace(what, r->path, sizeof(r->path), err, errlen)) < 0 ||
            (rc = read_trace(r, r->path, err, errlen)) < 0) {
                resume_free(r);
                return rc;
        }
        {
                /* recorded in resumed_from: it must hold from anywhere */
                char abs[PATH_MAX];
                if (realpath(r->path, abs) != NULL)
                        memcpy(r->path, abs, sizeof(abs));
        }
        resume_done(r);
        if (r->start == NULL) {
                snprintf(err, errlen,
                         "%s: no session.start in it: not a session's trace (%u of %u "
                         "lines unreadable)",
                         r->path, r->bad, r->lines);
                resume_free(r);
                return -EINVAL;
        }
        if (!r->ended && (holder = resume_trace_holder(r->path)) > 0) {
                snprintf(err, errlen,
                         "session %s is still running (process %d has its trace open); "
                         "end it first",
                         r->session_id, (int)holder);
                resume_free(r);
                return -EBUSY;
        }
        read_chain(r);
        *out = r;
        return 0;
}

/* ---- the earlier session's settings ---- */

static void set_u64(const json_t *o, const char *key, uint64_t *field)
{
        json_int_t v = json_integer_value(json_object_get(o, key));

        if (v > 0)
                *field = (uint64_t)v;
}

void resume_apply(struct resume *r, struct options *o)
{
        const json_t *st = r->start, *lim = json_object_get(st, "limits");
        const char *s;
        uint64_t pids = 0;
        static const struct {
                const char *opt, *key;
                size_t off;
        } limits[] = {
            {"memory", "memory_bytes", offsetof(struct exec_limits, memory_bytes)},
            {"cpu-time", "cpu_ms", offsetof(struct exec_limits, cpu_ms)},
            {"timeout", "timeout_ms", offsetof(struct exec_limits, timeout_ms)},
            {"tmpfs", "tmpfs_bytes", offsetof(struct exec_limits, tmpfs_bytes)},
            {"output-limit", "output_bytes", offsetof(struct exec_limits, output_bytes)},
            {"disk", "disk_bytes", offsetof(struct exec_limits, disk_bytes)},
        };

        if (!options_given(o, "mode") && (s = get_str(st, "mode")) != NULL &&
            options_parse_mode(s, &o->mode) == 0)
                o->mode_from = r->mode_from;
        if (!options_given(o, "model") && r->model[0] != '\0')
                o->model = r->model;
        if (!options_given(o, "workspace") && r->workspace[0] != '\0')
                o->workspace = r->workspace;
        if (!options_given(o, "workspace-mode") && (s = get_str(st, "workspace_mode")) != NULL)
                (void)exec_ws_mode_parse(s, &o->ws_mode);
        for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
                if (!options_given(o, limits[i].opt))
                        set_u64(lim, limits[i].key,
                                (uint64_t *)((char *)&o->limits + limits[i].off));
        set_u64(lim, "pids", &pids);
        if (!options_given(o, "pids") && pids > 0 && pids <= UINT32_MAX)
                o->limits.pids = (uint32_t)pids;
        if (!options_given(o, "max-parallel"))
                set_u64(lim, "max_parallel", &o->max_parallel);
        if (!options_given(o, "max-iterations"))
                set_u64(st, "max_iterations", &o->max_iterations);
        if (!options_given(o, "image") &&
            (s = get_str(json_object_get(st, "image"), "ref")) != NULL)
                o->image = s;
        if (!options_given(o, "approval") &&
            (s = get_str(json_object_get(st, "approval"), "policy")) != NULL)
                o->approval = s;
}

void resume_notes(const struct resume *r, const struct options *o,
                  void (*fn)(const char *line, void *ud), void *ud)
{
        char line[PATH_MAX * 2 + 200], here[PATH_MAX], there[PATH_MAX];
        const char *ws = o->workspace != NULL ? o->workspace : ".";

        snprintf(line, sizeof(line), "resuming session %s (trace %s): %zu earlier messages",
                 r->session_id, r->path, json_array_size(r->messages));
        fn(line, ud);
        if (r->bad > 0) {
                snprintf(line, sizeof(line), "%u line%s of the trace %s not valid events: skipped",
                         r->bad, r->bad == 1 ? "" : "s", r->bad == 1 ? "was" : "were");
                fn(line, ud);
        }
        if (!r->ended) {
                snprintf(line, sizeof(line),
                         "the earlier session did not end cleanly (no "
                         "session.end): it goes on from its last event");
                fn(line, ud);
        }
        if (r->unfinished > 0) {
                snprintf(line, sizeof(line),
                         "%u tool call%s had not finished: the model is told %s no result",
                         r->unfinished, r->unfinished == 1 ? "" : "s",
                         r->unfinished == 1 ? "it has" : "they have");
                fn(line, ud);
        }
        if (r->lost[0] != '\0') {
                snprintf(line, sizeof(line),
                         "the conversation before %s is lost: its trace cannot be read", r->lost);
                fn(line, ud);
        }
        if (realpath(ws, here) == NULL)
                snprintf(here, sizeof(here), "%s", ws);
        if (realpath(r->workspace, there) == NULL)
                snprintf(there, sizeof(there), "%s", r->workspace);
        if (options_given(o, "workspace") && r->workspace[0] != '\0' && strcmp(here, there) != 0) {
                snprintf(line, sizeof(line),
                         "the earlier session worked in %s; this one works in %s", r->workspace,
                         here);
                fn(line, ud);
        } else if (!options_given(o, "workspace") && getcwd(here, sizeof(here)) != NULL &&
                   strcmp(here, there) != 0) {
                snprintf(line, sizeof(line),
                         "it goes on in the earlier session's workspace %s, not the current "
                         "directory (--workspace DIR to change it)",
                         r->workspace);
                fn(line, ud);
        }
}

/* ---- who has a trace open ---- */

pid_t resume_trace_holder(const char *path)
{
        struct stat want, st;
        struct dirent *d, *f;
        DIR *proc, *fds;
        char dir[64], fd[320];
        pid_t self = getpid(), found = 0;

        if (stat(path, &want) < 0 || (proc = opendir("/proc")) == NULL)
                return 0;
        while (found == 0 && (d = readdir(proc)) != NULL) {
                pid_t pid = (pid_t)atoi(d->d_name);
                if (pid <= 0 || pid == self)
                        continue;
                snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
                if ((fds = opendir(dir)) == NULL)
                        continue; /* another user's, or gone */
                while ((f = readdir(fds)) != NULL) {
                        if (f->d_name[0] == '.')
                                continue;
                        snprintf(fd, sizeof(fd), "%s/%s", dir, f->d_name);
                        if (stat(fd, &st) == 0 && st.st_dev == want.st_dev &&
                            st.st_ino == want.st_ino) {
                                found = pid;
                                break;
                        }
                }
                closedir(fds);
        }
        closedir(proc);
        return found;
}

/* ---- the newest sessions of a workspace ---- */

#define RECENT_SCAN 200 /* traces looked into, newest first */

struct entry {
        char name[160];
        time_t mtime;
};

static int by_mtime(const void *x, const void *y)
{
        const struct entry *a = x, *b = y;

        if (a->mtime != b->mtime)
                return a->mtime < b->mtime ? 1 : -1;
        return -strcmp(a->name, b->name);
}

/* Whether the file's last line is a session.end. */
static bool ends_with_end(int fd, off_t size)
{
        char buf[4096];
        off_t at = size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0;
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, at);
        char *last;
        json_t *ev;
        bool end;

        if (n <= 0)
                return false;
        while (n > 0 && buf[n - 1] == '\n')
                n--;
        buf[n] = '\0';
        last = strrchr(buf, '\n');
        last = last != NULL ? last + 1 : buf;
        ev = json_loads(last, 0, NULL);
        end = ev != NULL && get_str(ev, "type") != NULL &&
              strcmp(get_str(ev, "type"), "session.end") == 0;
        json_decref(ev);
        return end;
}

/* Fills b from the trace's head (session.start, then the first prompt);
 * false when it is not one of `workspace`. */
static bool brief(int dfd, const struct entry *e, const char *workspace, bool ended_only,
                  struct resume_brief *b)
{
        char head[65536];
        int fd = openat(dfd, e->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        ssize_t n;
        char *nl;
        json_t *ev;
        bool ok = false;

        if (fd < 0)
                return false;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
            (n = pread(fd, head, sizeof(head) - 1, 0)) <= 0) {
                close(fd);
                return false;
        }
        head[n] = '\0';
        nl = strchr(head, '\n');
        if (nl != NULL)
                *nl = '\0';
        ev = json_loads(head, 0, NULL);
        if (ev != NULL && get_str(ev, "workspace") != NULL &&
            strcmp(get_str(ev, "workspace"), workspace) == 0 &&
            strcmp(get_str(ev, "type") ? get_str(ev, "type") : "", "session.start") == 0) {
                memset(b, 0, sizeof(*b));
                snprintf(b->id, sizeof(b->id), "%s",
                         get_str(ev, "session_id") ? get_str(ev, "session_id") : "");
                b->when = st.st_mtime;
                b->ended = ends_with_end(fd, st.st_size);
                ok = b->id[0] != '\0' && (b->ended || !ended_only);
        }
        json_decref(ev);
        /* the first prompt, when it is in the head */
        for (char *l = nl != NULL ? nl + 1 : NULL; ok && l != NULL && *l != '\0'; l = nl + 1) {
                json_t *m;
                if ((nl = strchr(l, '\n')) == NULL)
                        break;
                *nl = '\0';
                m = json_loads(l, 0, NULL);
                if (m != NULL && get_str(m, "type") != NULL &&
                    strcmp(get_str(m, "type"), "user.message") == 0 && get_str(m, "text")) {
                        snprintf(b->prompt, sizeof(b->prompt), "%s", get_str(m, "text"));
                        json_decref(m);
                        break;
                }
                json_decref(m);
        }
        close(fd);
        return ok;
}

int resume_recent(const char *workspace, bool ended_only, struct resume_brief *out, int max)
{
        char dir[PATH_MAX];
        struct entry *v = NULL;
        size_t nv = 0, cap = 0;
        struct dirent *d;
        struct stat st;
        DIR *dp;
        int n = 0;

        if (max <= 0 || sessions_path("", dir, sizeof(dir)) < 0 || (dp = opendir(dir)) == NULL)
                return 0;
        while ((d = readdir(dp)) != NULL) {
                size_t len = strlen(d->d_name);
                if (len < 7 || len >= sizeof(v->name) ||
                    strcmp(d->d_name + len - 6, ".jsonl") != 0 ||
                    fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                if (nv == cap) {
                        struct entry *g = realloc(v, (cap ? cap * 2 : 64) * sizeof(*v));
                        if (g == NULL)
                                break;
                        v = g;
                        cap = cap ? cap * 2 : 64;
                }
                snprintf(v[nv].name, sizeof(v[nv].name), "%s", d->d_name);
                v[nv++].mtime = st.st_mtime;
        }
        if (nv > 0)
                qsort(v, nv, sizeof(*v), by_mtime);
        for (size_t i = 0; i < nv && i < RECENT_SCAN && n < max; i++)
                if (brief(dirfd(dp), &v[i], workspace, ended_only, &out[n]) &&
                    (size_t)snprintf(out[n].path, sizeof(out[n].path), "%s/%s", dir, v[i].name) <
                        sizeof(out[n].path))
                        n++;
        closedir(dp);
        free(v);
        return n;
}
