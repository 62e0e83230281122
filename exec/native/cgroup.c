/* cgroup: one execution's control group on cgroup v1 (a directory per
 * hierarchy) or v2 (one directory): limits, stats, signals, freeze and
 * thaw, kill, removal. It never touches a group not named
 * "proctor-<pid>-...", never starts a thread, and every wait it does is
 * short and bounded. */
#include "exec/native/cgroup.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CG_MAX_HIER 5
#define CG_NAME_MAX 64
#define CG_PREFIX   "proctor-"

/* Optional files, learned absent on first failure so later calls skip them. */
enum {
        SKIP_MEMSW = 1u << 0,
        SKIP_SWAP_MAX = 1u << 1,
        SKIP_OOM_GROUP = 1u << 2,
        SKIP_PEAK = 1u << 3,
        SKIP_KILL = 1u << 4,
        SKIP_CPU_WEIGHT = 1u << 5,
};

/* Bounds on the only waits in this module (freeze, kill passes, reaping). */
#define NAP_NS         200000L
#define FREEZE_POLLS   50
#define KILL_PASSES    50
#define REAP_RMDIR_TRY 250

struct hier {
        unsigned ctl; /* controllers in this hierarchy (v2: all of them) */
        int fd;       /* O_PATH fd of the directory execution groups go in */
        char *path;   /* the same directory, for messages */
};

struct cgroup_sys {
        enum cgroup_version version;
        unsigned ctl;
        unsigned skip;
        bool lazy;         /* opened without the probe (cgroup_sys_open_unproven) */
        unsigned unproven; /* bit i: hierarchy i has not yet taken a group */
        int nhier;
        struct hier h[CG_MAX_HIER];
};

struct cgroup {
        struct cgroup_sys *sys;
        char name[CG_NAME_MAX];
        unsigned made; /* bit i: the group was made in hierarchy i */
        unsigned live; /* bit i: the directory exists in hierarchy i */
        int fd;        /* v2 group directory, -1 on v1 */
        uint64_t peak; /* v2 without memory.peak: highest memory.current seen */
};

static const struct {
        unsigned ctl;
        const char *name;
} controllers[] = {
    {CG_MEMORY, "memory"},   {CG_PIDS, "pids"},       {CG_CPU, "cpu"},
    {CG_CPUACCT, "cpuacct"}, {CG_FREEZER, "freezer"},
};

/* How to stop a group from forking while its pids are killed. */
struct freezer {
        const char *file, *on, *off, *state, *frozen;
};
static const struct freezer freezer_v1 = {"freezer.state", "FROZEN", "THAWED", "freezer.state",
                                          "FROZEN"};
static const struct freezer freezer_v2 = {"cgroup.freeze", "1", "0", "cgroup.events", "frozen 1"};

__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t len, const char *fmt, ...)
{
        if (!buf || !len)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
}

/* snprintf for paths: a truncated path is an error, never a different path */
__attribute__((format(printf, 3, 4))) static int pathf(char *out, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(out, size, fmt, ap);
        va_end(ap);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static void nap(long ns)
{
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
}

/* O_CREAT|O_TRUNC so the same call works on cgroupfs and on a tree of plain
 * files; on cgroupfs a missing file then fails with EACCES, not ENOENT. */
static int write_at(int dirfd, const char *path, const char *val)
{
        int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        size_t len = strlen(val);
        ssize_t n = write(fd, val, len);
        int rc = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
        close(fd);
        return rc;
}

/* Reads at most size-1 bytes, NUL-terminated; returns the length or -errno. */
static ssize_t read_at(int dirfd, const char *path, char *buf, size_t size)
{
        int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t len = 0;
        ssize_t n = 0;
        while (len < size - 1) {
                n = read(fd, buf + len, size - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        int rc = n < 0 ? -errno : 0;
        close(fd);
        buf[len] = '\0';
        return rc < 0 ? rc : (ssize_t)len;
}

static bool missing(int rc)
{
        return rc == -ENOENT || rc == -EACCES;
}

static int hier_of(const struct cgroup_sys *sys, unsigned ctl)
{
        for (int i = 0; i < sys->nhier; i++)
                if (sys->h[i].ctl & ctl)
                        return i;
        return -1;
}

/* The hierarchy of `ctl` if the group was made there, else -1. */
static int group_hier(const struct cgroup *cg, unsigned ctl)
{
        int i = hier_of(cg->sys, ctl);
        return i >= 0 && (cg->made & (1u << i)) ? i : -1;
}

/* The first hierarchy the group was made in. */
static int group_first(const struct cgroup *cg)
{
        for (int i = 0; i < cg->sys->nhier; i++)
                if (cg->made & (1u << i))
                        return i;
        return 0;
}

/* The first hierarchy the group was made in other than `skip`: one that
 * lists every process of the group, whichever joined the freezer late. */
static int group_besides(const struct cgroup *cg, int skip)
{
        for (int i = 0; i < cg->sys->nhier; i++)
                if (i != skip && (cg->made & (1u << i)))
                        return i;
        return skip;
}

static int group_file(const struct cgroup *cg, const char *file, char *out, size_t size)
{
        return pathf(out, size, "%s/%s", cg->name, file);
}

static int group_write(const struct cgroup *cg, int i, const char *file, const char *val)
{
        char path[CG_NAME_MAX + 64];
        int rc = group_file(cg, file, path, sizeof path);
        return rc ? rc : write_at(cg->sys->h[i].fd, path, val);
}

static ssize_t group_read(const struct cgroup *cg, int i, const char *file, char *buf, size_t size)
{
        char path[CG_NAME_MAX + 64];
        int rc = group_file(cg, file, path, sizeof path);
        return rc ? rc : read_at(cg->sys->h[i].fd, path, buf, size);
}

/* A decimal that runs to whitespace or the end; anything else is malformed. */
static bool parse_u64(const char *s, uint64_t *out)
{
        if (!isdigit((unsigned char)*s))
                return false;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || (*end && !isspace((unsigned char)*end)))
                return false;
        *out = v;
        return true;
}

/* The value of the "key N" line of a flat-keyed file. */
static bool parse_keyed(const char *buf, const char *key, uint64_t *out)
{
        size_t klen = strlen(key);
        for (const char *line = buf; *line;) {
                if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
                        return parse_u64(line + klen + 1, out);
                const char *nl = strchr(line, '\n');
                if (!nl)
                        break;
                line = nl + 1;
        }
        return false;
}

/* One stat: the whole file (key NULL) or one key of it. *v is 0 unless this
 * returns 0; -errno says the file could not be read (callers learn that an
 * optional file is absent), -EINVAL that its content did not parse. */
static int stat_read(const struct cgroup *cg, int i, const char *file, const char *key, uint64_t *v)
{
        *v = 0;
        if (i < 0)
                return -ENOENT;
        char buf[1024];
        ssize_t n = group_read(cg, i, file, buf, sizeof buf);
        if (n < 0)
                return (int)n;
        bool ok = key ? parse_keyed(buf, key, v) : parse_u64(buf, v);
        if (!ok)
                *v = 0;
        return ok ? 0 : -EINVAL;
}

/* ---- discovery ---- */

static bool list_has(const char *s, const char *end, const char *ctl)
{
        size_t clen = strlen(ctl);
        if (clen == 0)
                return s == end;
        while (s < end) {
                const char *comma = memchr(s, ',', (size_t)(end - s));
                if (!comma)
                        comma = end;
                if ((size_t)(comma - s) == clen && memcmp(s, ctl, clen) == 0)
                        return true;
                s = comma + 1;
        }
        return false;
}

/* Proctor's own group for controller `ctl` ("" for the v2 line) from
 * /proc/self/cgroup lines "id:controller,list:/path". */
static bool self_group(const char *self, const char *ctl, char *path, size_t size, long *id)
{
        for (const char *line = self; *line;) {
                const char *end = strchrnul(line, '\n');
                const char *c1 = memchr(line, ':', (size_t)(end - line));
                const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
                if (c2 && list_has(c1 + 1, c2, ctl)) {
                        size_t plen = (size_t)(end - c2 - 1);
                        if (plen == 0 || plen >= size || c2[1] != '/')
                                return false;
                        memcpy(path, c2 + 1, plen);
                        path[plen] = '\0';
                        *id = strtol(line, NULL, 10);
                        /* outside our cgroup namespace: not a path we can use */
                        return !strstr(path, "/..");
                }
                line = *end ? end + 1 : end;
        }
        return false;
}

static void ctl_names(unsigned ctl, char *buf, size_t size)
{
        size_t off = 0;
        buf[0] = '\0';
        for (size_t k = 0; k < sizeof controllers / sizeof controllers[0]; k++)
                if ((ctl & controllers[k].ctl) && off < size)
                        off += (size_t)snprintf(buf + off, size - off, "%s%s", off ? " " : "",
                                                controllers[k].name);
}

static void drop_hiers(struct cgroup_sys *sys)
{
        for (int i = 0; i < sys->nhier; i++) {
                if (sys->h[i].fd >= 0)
                        close(sys->h[i].fd);
                free(sys->h[i].path);
        }
        sys->nhier = 0;
        sys->ctl = 0;
}

/* Proves groups can be made in `dir` by making and removing one. */
static int probe(int dirfd)
{
        char name[CG_NAME_MAX];
        snprintf(name, sizeof name, CG_PREFIX "%d-probe", (int)getpid());
        if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
                return -errno;
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* Adds `dir` as hierarchy for `ctl` once it is proven writable; a lazy
 * sys leaves the proof to the first cgroup_create. */
static int hier_add(struct cgroup_sys *sys, const char *dir, unsigned ctl)
{
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int rc = sys->lazy ? 0 : probe(fd);
        char *path = rc ? NULL : strdup(dir);
        if (!rc && !path)
                rc = -ENOMEM;
        if (rc) {
                close(fd);
                return rc;
        }
        if (sys->lazy)
                sys->unproven |= 1u << sys->nhier;
        sys->h[sys->nhier++] = (struct hier){.ctl = ctl, .fd = fd, .path = path};
        sys->ctl |= ctl;
        return 0;
}

static int join_path(char *out, size_t size, const char *root, const char *sub, const char *own)
{
        /* own "/" is the hierarchy root itself */
        return pathf(out, size, "%s%s%s", root, sub, strcmp(own, "/") ? own : "");
}

/* v1: each controller where /proc/self/cgroup puts proctor; comounted
 * controllers (same hierarchy id) share one directory. Needs memory+pids. */
static int open_v1(struct cgroup_sys *sys, const char *root, const char *self, char *why,
                   size_t whylen)
{
        long ids[CG_MAX_HIER];
        for (size_t k = 0; k < sizeof controllers / sizeof controllers[0]; k++) {
                unsigned ctl = controllers[k].ctl;
                char own[PATH_MAX], sub[64], dir[PATH_MAX];
                long id;
                if (!self_group(self, controllers[k].name, own, sizeof own, &id))
                        continue;
                int i = 0;
                while (i < sys->nhier && ids[i] != id)
                        i++;
                if (i < sys->nhier) {
                        sys->h[i].ctl |= ctl;
                        sys->ctl |= ctl;
                        continue;
                }
                snprintf(sub, sizeof sub, "/%s", controllers[k].name);
                ids[sys->nhier] = id;
                int rc = join_path(dir, sizeof dir, root, sub, own);
                rc = rc ? rc : hier_add(sys, dir, ctl);
                bool required = ctl & (CG_MEMORY | CG_PIDS);
                if (rc && required && rc != -ENOENT) {
                        say(why, whylen,
                            "cannot create groups under %s: %s; run as root or delegate a cgroup",
                            dir, strerror(-rc));
                        return rc;
                }
        }
        if ((sys->ctl & (CG_MEMORY | CG_PIDS)) != (CG_MEMORY | CG_PIDS)) {
                say(why, whylen, "no cgroup v1 memory and pids hierarchies under %s", root);
                return -ENOENT;
        }
        sys->version = CGROUP_V1;
        return 0;
}

static unsigned parse_v2_controllers(const char *list)
{
        static const struct {
                unsigned ctl;
                const char *name;
        } wanted[] = {{CG_MEMORY, "memory"}, {CG_PIDS, "pids"}, {CG_CPU, "cpu"}};
        unsigned ctl = 0;
        char copy[512];
        snprintf(copy, sizeof copy, "%s", list);
        char *save = NULL;
        for (char *tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
                for (size_t k = 0; k < sizeof wanted / sizeof wanted[0]; k++)
                        if (strcmp(tok, wanted[k].name) == 0)
                                ctl |= wanted[k].ctl;
        return ctl;
}

/* True when proctor is the only process in the group at `basefd`. */
static bool alone_in(int basefd)
{
        char buf[256];
        uint64_t pid;
        if (read_at(basefd, "cgroup.procs", buf, sizeof buf) < 0 || !parse_u64(buf, &pid))
                return false;
        const char *nl = strchr(buf, '\n');
        return pid == (uint64_t)getpid() && (!nl || nl[1] == '\0');
}

/* Moves proctor into the leaf "proctor-<pid>-self" of the group at basefd. */
static int move_self_to_leaf(int basefd)
{
        char leaf[CG_NAME_MAX], procs[CG_NAME_MAX + 16], pid[16];
        snprintf(leaf, sizeof leaf, CG_PREFIX "%d-self", (int)getpid());
        snprintf(procs, sizeof procs, "%s/cgroup.procs", leaf);
        snprintf(pid, sizeof pid, "%d", (int)getpid());
        if (mkdirat(basefd, leaf, 0755) < 0 && errno != EEXIST)
                return -errno;
        return write_at(basefd, procs, pid);
}

/* v2 forbids controllers in a group that holds processes, so when proctor
 * alone sits in its group it moves itself into a leaf and tries again. */
static int enable_v2(int basefd, unsigned ctl, const char *base, char *why, size_t whylen)
{
        char want[64];
        snprintf(want, sizeof want, "+memory +pids%s", ctl & CG_CPU ? " +cpu" : "");
        int rc = write_at(basefd, "cgroup.subtree_control", want);
        if (rc == -EBUSY && !alone_in(basefd)) {
                say(why, whylen,
                    "cannot enable controllers in %s: other processes share proctor's cgroup; "
                    "run proctor in a delegated cgroup, e.g. "
                    "`systemd-run --user --scope -p Delegate=yes proctor ...`",
                    base);
                return rc;
        }
        if (rc == -EBUSY && (rc = move_self_to_leaf(basefd)) == 0)
                rc = write_at(basefd, "cgroup.subtree_control", want);
        if (rc)
                say(why, whylen,
                    "cannot enable controllers in %s: %s; run as root or delegate a cgroup, e.g. "
                    "`systemd-run --user --scope -p Delegate=yes proctor ...`",
                    base, strerror(-rc));
        return rc;
}

/* v2 at `root`: groups go under proctor's own group from the "0::" line. */
static int open_v2(struct cgroup_sys *sys, const char *root, const char *self, char *why,
                   size_t whylen)
{
        char own[PATH_MAX], base[PATH_MAX], list[512];
        long id;
        if (!self_group(self, "", own, sizeof own, &id)) {
                say(why, whylen, "cgroup v2 at %s, but proctor's own group (0::/path) is unknown",
                    root);
                return -ENOENT;
        }
        int rc = join_path(base, sizeof base, root, "", own);
        int basefd = rc ? -1 : open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (basefd < 0) {
                rc = rc ? rc : -errno;
                say(why, whylen, "cannot open %s: %s", base, strerror(-rc));
                return rc;
        }
        /* what the parent grants; a minimal fake tree has it only at the root */
        char rootfile[PATH_MAX];
        unsigned ctl = 0;
        if (read_at(basefd, "cgroup.controllers", list, sizeof list) >= 0 ||
            (!pathf(rootfile, sizeof rootfile, "%s/cgroup.controllers", root) &&
             read_at(AT_FDCWD, rootfile, list, sizeof list) >= 0))
                ctl = parse_v2_controllers(list);
        rc = -ENOTSUP;
        if ((ctl & (CG_MEMORY | CG_PIDS)) != (CG_MEMORY | CG_PIDS))
                say(why, whylen,
                    "cgroup v2 at %s does not offer the memory and pids controllers; "
                    "delegate them, e.g. `systemd-run --user --scope -p Delegate=yes proctor ...`",
                    base);
        else
                rc = enable_v2(basefd, ctl, base, why, whylen);
        close(basefd);
        if (rc)
                return rc;
        rc = hier_add(sys, base, ctl);
        if (rc) {
                say(why, whylen,
                    "cannot create groups under %s: %s; run as root or delegate a cgroup", base,
                    strerror(-rc));
                return rc;
        }
        sys->version = CGROUP_V2;
        return 0;
}

static bool exists_in(const char *dir, const char *file)
{
        char path[PATH_MAX];
        return !pathf(path, sizeof path, "%s/%s", dir, file) && access(path, F_OK) == 0;
}

static int sys_open(const char *root, const char *proc_self_cgroup, bool lazy,
                    struct cgroup_sys **out, char *why, size_t whylen)
{
        root = root ? root : "/sys/fs/cgroup";
        proc_self_cgroup = proc_self_cgroup ? proc_self_cgroup : "/proc/self/cgroup";
        say(why, whylen, "%s", "");
        struct cgroup_sys *sys = calloc(1, sizeof *sys);
        if (!sys)
                return -ENOMEM;
        sys->lazy = lazy;
        char self[8192];
        char unified[PATH_MAX];
        pathf(unified, sizeof unified, "%s/unified", root);
        int rc = (int)read_at(AT_FDCWD, proc_self_cgroup, self, sizeof self);
        if (rc < 0) {
                say(why, whylen, "cannot read %s: %s", proc_self_cgroup, strerror(-rc));
        } else if (exists_in(root, "cgroup.controllers")) {
                rc = open_v2(sys, root, self, why, whylen);
        } else if ((rc = open_v1(sys, root, self, why, whylen)) == -ENOENT &&
                   exists_in(unified, "cgroup.controllers")) {
                drop_hiers(sys);
                rc = open_v2(sys, unified, self, why, whylen);
        }
        if (rc == -ENOMEM) {
                cgroup_sys_free(sys);
                return rc;
        }
        if (rc) {
                drop_hiers(sys);
                sys->version = CGROUP_NONE;
        } else {
                char names[64];
                ctl_names(sys->ctl, names, sizeof names);
                say(why, whylen, "cgroup v%d: %s under %s", (int)sys->version, names,
                    sys->h[0].path);
        }
        *out = sys;
        return 0;
}

int cgroup_sys_open(const char *root, const char *proc_self_cgroup, struct cgroup_sys **out,
                    char *why, size_t whylen)
{
        return sys_open(root, proc_self_cgroup, false, out, why, whylen);
}

int cgroup_sys_open_unproven(const char *root, const char *proc_self_cgroup,
                             struct cgroup_sys **out, char *why, size_t whylen)
{
        return sys_open(root, proc_self_cgroup, true, out, why, whylen);
}

void cgroup_sys_free(struct cgroup_sys *sys)
{
        if (!sys)
                return;
        drop_hiers(sys);
        free(sys);
}

enum cgroup_version cgroup_sys_version(const struct cgroup_sys *sys)
{
        return sys ? sys->version : CGROUP_NONE;
}

unsigned cgroup_sys_controllers(const struct cgroup_sys *sys)
{
        return sys ? sys->ctl : 0;
}

/* ---- one group ---- */

static bool valid_name(const char *name)
{
        size_t len = strlen(name);
        return len > 0 && len < CG_NAME_MAX && !strchr(name, '/') && strcmp(name, ".") &&
               strcmp(name, "..");
}

/* cgroupfs says EBUSY, never ENOTEMPTY; a tree of plain files (tests) says
 * ENOTEMPTY, and there the files stand in for control files: remove them. */
static int rmdir_at(int dirfd, const char *name)
{
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
                return 0;
        if (errno != ENOTEMPTY)
                return -errno;
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return -ENOTEMPTY;
        }
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_type == DT_REG)
                        unlinkat(fd, de->d_name, 0);
        closedir(d);
        return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 ? 0 : -errno;
}

/* Removes the group wherever it still exists; keeps track of what is left. */
static int group_rmdir(struct cgroup *cg)
{
        int rc = 0;
        for (int i = 0; i < cg->sys->nhier; i++) {
                if (!(cg->live & (1u << i)))
                        continue;
                int r = rmdir_at(cg->sys->h[i].fd, cg->name);
                if (r == 0 || r == -ENOENT)
                        cg->live &= ~(1u << i);
                else if (!rc)
                        rc = r;
        }
        return rc;
}

static void group_free(struct cgroup *cg)
{
        if (cg->fd >= 0)
                close(cg->fd);
        free(cg);
}

/* Writes one limit; optional files that the kernel lacks are remembered and
 * skipped from then on. */
static int limit_write(struct cgroup *cg, unsigned ctl, const char *file, const char *val,
                       unsigned optional, char *err, size_t errlen)
{
        struct cgroup_sys *sys = cg->sys;
        int i = group_hier(cg, ctl);
        if (i < 0 || (sys->skip & optional))
                return 0;
        int rc = group_write(cg, i, file, val);
        if (rc && optional && missing(rc)) {
                sys->skip |= optional;
                return 0;
        }
        if (rc)
                say(err, errlen, "cannot set %s/%s/%s to %s: %s", sys->h[i].path, cg->name, file,
                    val, strerror(-rc));
        return rc;
}

static int apply_limits(struct cgroup *cg, const struct cgroup_limits *lim, char *err,
                        size_t errlen)
{
        bool v2 = cg->sys->version == CGROUP_V2;
        char mem[24], pids[16], quota[32], weight[16];
        snprintf(mem, sizeof mem, "%" PRIu64, lim->memory_bytes);
        /* v1 shares: 1024 is a normal process, at least 2 */
        uint32_t shares = lim->cpu_weight * 1024 / 100 < 2 ? 2 : lim->cpu_weight * 1024 / 100;
        snprintf(weight, sizeof weight, "%" PRIu32, v2 ? lim->cpu_weight : shares);
        snprintf(pids, sizeof pids, "%" PRIu32, lim->pids);
        snprintf(quota, sizeof quota, v2 ? "%" PRIu64 " 100000" : "%" PRIu64,
                 (uint64_t)lim->cpu_quota_pct * 1000);
        const struct {
                bool on;
                unsigned ctl;
                const char *file, *val;
                unsigned optional;
        } w[] = {
            {lim->memory_bytes, CG_MEMORY, v2 ? "memory.max" : "memory.limit_in_bytes", mem, 0},
            {!v2 && lim->memory_bytes, CG_MEMORY, "memory.memsw.limit_in_bytes", mem, SKIP_MEMSW},
            {v2, CG_MEMORY, "memory.swap.max", "0", SKIP_SWAP_MAX},
            {v2, CG_MEMORY, "memory.oom.group", "1", SKIP_OOM_GROUP},
            {lim->pids, CG_PIDS, "pids.max", pids, 0},
            {!v2 && lim->cpu_quota_pct, CG_CPU, "cpu.cfs_period_us", "100000", 0},
            {lim->cpu_quota_pct, CG_CPU, v2 ? "cpu.max" : "cpu.cfs_quota_us", quota, 0},
            {lim->cpu_weight, CG_CPU, v2 ? "cpu.weight" : "cpu.shares", weight, SKIP_CPU_WEIGHT},
        };
        for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
                if (!w[k].on)
                        continue;
                int rc = limit_write(cg, w[k].ctl, w[k].file, w[k].val, w[k].optional, err, errlen);
                /* v1 keeps memory <= memsw: raising a set limit takes memsw first */
                if (rc == -EINVAL && k == 0 && !v2 &&
                    (rc = limit_write(cg, CG_MEMORY, w[1].file, mem, w[1].optional, err, errlen)) ==
                        0)
                        rc = limit_write(cg, CG_MEMORY, w[0].file, mem, 0, err, errlen);
                if (rc)
                        return rc;
        }
        return 0;
}

/* A hierarchy of a lazily opened sys refused its first group: settle what
 * the probe would have settled at open. Without memory or pids no cgroup
 * is used at all (version CGROUP_NONE, -ENOTSUP); another controller's
 * hierarchy is retired (its slot stays, so other groups' bits keep their
 * meaning) and the group goes on without it (0). */
static int settle_refusal(struct cgroup_sys *sys, struct cgroup *cg, int i, int rc, char *err,
                          size_t errlen)
{
        if (sys->h[i].ctl & (CG_MEMORY | CG_PIDS)) {
                say(err, errlen,
                    "cannot create groups under %s: %s; run as root or delegate a cgroup",
                    sys->h[i].path, strerror(-rc));
                group_rmdir(cg);
                drop_hiers(sys);
                sys->version = CGROUP_NONE;
                sys->unproven = 0;
                return -ENOTSUP;
        }
        close(sys->h[i].fd);
        sys->h[i].fd = -1;
        sys->h[i].ctl = 0;
        sys->unproven &= ~(1u << i);
        sys->ctl = 0;
        for (int k = 0; k < sys->nhier; k++)
                sys->ctl |= sys->h[k].ctl;
        return 0;
}

int cgroup_create_with(struct cgroup_sys *sys, const char *name, unsigned ctl,
                       const struct cgroup_limits *lim, struct cgroup **out, char *err,
                       size_t errlen)
{
        *out = NULL;
        if (!sys || sys->version == CGROUP_NONE) {
                say(err, errlen, "no usable cgroup hierarchy");
                return -ENOTSUP;
        }
        if (!valid_name(name)) {
                say(err, errlen, "invalid cgroup name '%s'", name);
                return -EINVAL;
        }
        struct cgroup *cg = calloc(1, sizeof *cg);
        if (!cg)
                return -ENOMEM;
        cg->sys = sys;
        cg->fd = -1;
        snprintf(cg->name, sizeof cg->name, "%s", name);
        int rc = 0;
        for (int i = 0; i < sys->nhier && !rc; i++) {
                /* v2 has one directory for every controller */
                if (!(sys->h[i].ctl & ctl) && sys->version == CGROUP_V1)
                        continue;
                if (mkdirat(sys->h[i].fd, name, 0755) == 0) {
                        cg->made |= 1u << i;
                        cg->live |= 1u << i;
                        sys->unproven &= ~(1u << i);
                        continue;
                }
                rc = -errno;
                if ((sys->unproven & (1u << i)) && rc != -EEXIST) {
                        rc = settle_refusal(sys, cg, i, rc, err, errlen);
                        continue;
                }
                say(err, errlen, "cannot create %s/%s: %s", sys->h[i].path, name, strerror(-rc));
        }
        if (!rc && sys->version == CGROUP_V2) {
                cg->fd = openat(sys->h[0].fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (cg->fd < 0) {
                        rc = -errno;
                        say(err, errlen, "cannot open %s/%s: %s", sys->h[0].path, name,
                            strerror(errno));
                }
        }
        if (!rc && lim)
                rc = apply_limits(cg, lim, err, errlen);
        if (rc) {
                group_rmdir(cg);
                group_free(cg);
                return rc;
        }
        *out = cg;
        return 0;
}

int cgroup_create(struct cgroup_sys *sys, const char *name, const struct cgroup_limits *lim,
                  struct cgroup **out, char *err, size_t errlen)
{
        return cgroup_create_with(sys, name, ~0u, lim, out, err, errlen);
}

int cgroup_set_limits(struct cgroup *cg, const struct cgroup_limits *lim, char *err, size_t errlen)
{
        return apply_limits(cg, lim, err, errlen);
}

int cgroup_procs_fds(const struct cgroup *cg, int *fds, int max)
{
        char path[CG_NAME_MAX + 64], alt[CG_NAME_MAX + 64];
        int n = 0;
        /* v1: "0" written to tasks moves the writing thread alone, which the
         * kernel does without write-locking the global threadgroup rwsem
         * that cgroup.procs takes; that lock waits for an RCU grace period
         * (milliseconds) when nothing migrated lately. The joining child is
         * single-threaded, so its thread is the whole process. */
        group_file(cg, cg->sys->version == CGROUP_V1 ? "tasks" : "cgroup.procs", path, sizeof path);
        group_file(cg, "cgroup.procs", alt, sizeof alt);
        for (int i = 0; i < cg->sys->nhier; i++) {
                if (!(cg->made & (1u << i)))
                        continue;
                if (n == max) {
                        while (n-- > 0)
                                close(fds[n]);
                        return -E2BIG;
                }
                int fd = openat(cg->sys->h[i].fd, path, O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        fd = openat(cg->sys->h[i].fd, alt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                                    0644);
                if (fd < 0) {
                        int rc = -errno;
                        while (n-- > 0)
                                close(fds[n]);
                        return rc;
                }
                fds[n++] = fd;
        }
        return n;
}

int cgroup_fd(const struct cgroup *cg)
{
        return cg->fd;
}

int cgroup_attach(struct cgroup *cg, pid_t pid)
{
        char val[24];
        snprintf(val, sizeof val, "%d", (int)pid);
        for (int i = 0; i < cg->sys->nhier; i++) {
                if (!(cg->made & (1u << i)))
                        continue;
                int rc = group_write(cg, i, "cgroup.procs", val);
                if (rc)
                        return rc;
        }
        return 0;
}

int cgroup_read_stats(struct cgroup *cg, struct cgroup_stats *st)
{
        struct cgroup_sys *sys = cg->sys;
        uint64_t pids = 0;
        memset(st, 0, sizeof *st);
        /* v2 has one directory, with cpu.stat even when the cpu controller is off */
        bool v2 = sys->version == CGROUP_V2;
        int mem_h = v2 ? 0 : group_hier(cg, CG_MEMORY);
        int pids_h = v2 ? 0 : group_hier(cg, CG_PIDS);
        if (v2) {
                stat_read(cg, 0, "cpu.stat", "usage_usec", &st->cpu_ns);
                st->cpu_ns *= 1000;
                stat_read(cg, 0, "memory.current", NULL, &st->mem_bytes);
                if (!(sys->skip & SKIP_PEAK) &&
                    missing(stat_read(cg, 0, "memory.peak", NULL, &st->mem_peak_bytes)))
                        sys->skip |= SKIP_PEAK;
                if (sys->skip & SKIP_PEAK) {
                        cg->peak = st->mem_bytes > cg->peak ? st->mem_bytes : cg->peak;
                        st->mem_peak_bytes = cg->peak;
                }
                stat_read(cg, 0, "memory.events", "oom_kill", &st->oom_kills);
        } else {
                stat_read(cg, group_hier(cg, CG_CPUACCT), "cpuacct.usage", NULL, &st->cpu_ns);
                stat_read(cg, mem_h, "memory.usage_in_bytes", NULL, &st->mem_bytes);
                stat_read(cg, mem_h, "memory.max_usage_in_bytes", NULL, &st->mem_peak_bytes);
                stat_read(cg, mem_h, "memory.oom_control", "oom_kill", &st->oom_kills);
        }
        stat_read(cg, pids_h, "pids.current", NULL, &pids);
        st->pids = pids > UINT32_MAX ? UINT32_MAX : (uint32_t)pids;
        stat_read(cg, pids_h, "pids.events", "max", &st->pids_denied);
        return 0;
}

/* One line of cgroup.procs: 1 if it named a pid that fn was called for. */
static int procs_line(const char *line, void (*fn)(pid_t, void *), void *arg)
{
        uint64_t pid;
        if (!parse_u64(line, &pid) || pid <= 1 || pid > INT_MAX || (pid_t)pid == getpid())
                return 0;
        fn((pid_t)pid, arg);
        return 1;
}

/* Calls fn(pid, arg) for each pid listed in the group's cgroup.procs in
 * hierarchy i but proctor itself (and pid 1, which is never an execution's);
 * returns how many were listed (gone or not), or -errno. The list is read in
 * chunks because a large group's does not fit one buffer. */
static int procs_each(const struct cgroup *cg, int i, void (*fn)(pid_t, void *), void *arg)
{
        char path[CG_NAME_MAX + 64], buf[4096];
        group_file(cg, "cgroup.procs", path, sizeof path);
        int fd = openat(cg->sys->h[i].fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int listed = 0;
        size_t have = 0;
        ssize_t n;
        do {
                while ((n = read(fd, buf + have, sizeof buf - 1 - have)) < 0 && errno == EINTR)
                        ;
                have += n > 0 ? (size_t)n : 0;
                buf[have] = '\0';
                char *line = buf, *nl;
                for (; (nl = strchr(line, '\n')); line = nl + 1) {
                        *nl = '\0';
                        listed += procs_line(line, fn, arg);
                }
                have = strlen(line); /* a partial line waits for the next chunk */
                memmove(buf, line, have + 1);
        } while (n > 0 && have < sizeof buf - 1);
        listed += procs_line(buf, fn, arg); /* a last line without a newline */
        close(fd);
        return listed;
}

struct sig_arg {
        int sig;
        pid_t except;
        int sent;
};

static void signal_one(pid_t pid, void *arg)
{
        struct sig_arg *a = arg;
        if (pid != a->except && kill(pid, a->sig) == 0)
                a->sent++;
}

static int kill_pass(const struct cgroup *cg, int i)
{
        struct sig_arg a = {SIGKILL, 0, 0};
        return procs_each(cg, i, signal_one, &a);
}

/* 0 once the group reports itself frozen; -EAGAIN when it is still
 * freezing after the bounded wait (it freezes on its own), -errno when the
 * freezer could not be written. */
static int freeze(const struct cgroup *cg, int i, const struct freezer *fz)
{
        int rc = group_write(cg, i, fz->file, fz->on);
        if (rc < 0)
                return rc;
        for (int t = 0; t < FREEZE_POLLS; t++) {
                char buf[256];
                if (group_read(cg, i, fz->state, buf, sizeof buf) < 0)
                        return -EAGAIN;
                if (strstr(buf, fz->frozen))
                        return 0;
                nap(NAP_NS);
        }
        return -EAGAIN;
}

int cgroup_kill(struct cgroup *cg)
{
        struct cgroup_sys *sys = cg->sys;
        bool v2 = sys->version == CGROUP_V2;
        if (v2 && !(sys->skip & SKIP_KILL)) {
                int rc = group_write(cg, 0, "cgroup.kill", "1");
                if (rc == 0)
                        return 0;
                if (missing(rc))
                        sys->skip |= SKIP_KILL;
        }
        /* freeze first so nothing forks between reading the pids and killing;
         * without a freezer the pids come from the first hierarchy */
        int i = v2 ? 0 : group_hier(cg, CG_FREEZER);
        const struct freezer *fz = i < 0 ? NULL : v2 ? &freezer_v2 : &freezer_v1;
        i = i < 0 ? group_first(cg) : i;
        bool frozen = fz && freeze(cg, i, fz) == 0;
        int rc = kill_pass(cg, i);
        if (fz)
                group_write(cg, i, fz->file, fz->off);
        for (int pass = 0; !frozen && rc > 0 && pass < KILL_PASSES; pass++) {
                nap(NAP_NS);
                rc = kill_pass(cg, i);
        }
        return rc < 0 ? rc : 0;
}

int cgroup_signal(struct cgroup *cg, int sig, pid_t except)
{
        struct sig_arg a = {sig, except, 0};
        int rc = procs_each(cg, group_besides(cg, group_hier(cg, CG_FREEZER)), signal_one, &a);
        return rc < 0 ? rc : a.sent;
}

struct move_arg {
        const struct cgroup *cg;
        int to;
        int failed;
};

static void move_one(pid_t pid, void *arg)
{
        struct move_arg *a = arg;
        char val[24];
        snprintf(val, sizeof val, "%d", (int)pid);
        /* ESRCH: it died since the list was read */
        int rc = group_write(a->cg, a->to, "cgroup.procs", val);
        if (rc < 0 && rc != -ESRCH)
                a->failed = rc;
}

static void count_one(pid_t pid, void *arg)
{
        (void)pid;
        (void)arg;
}

/* v1: a group made without the freezer hierarchy (sandboxes do without it,
 * see exec/spawn.c) gets its directory there now, and every process of the group
 * is moved in, until the freezer lists as many as the first hierarchy (a
 * process may fork while its siblings move). Returns the hierarchy. */
static int join_freezer(struct cgroup *cg)
{
        struct cgroup_sys *sys = cg->sys;
        int i = hier_of(sys, CG_FREEZER);
        if (i < 0 || sys->h[i].fd < 0)
                return -ENOTSUP;
        if (cg->made & (1u << i))
                return i;
        int from = group_besides(cg, i);
        if (mkdirat(sys->h[i].fd, cg->name, 0755) < 0 && errno != EEXIST)
                return -errno;
        cg->made |= 1u << i;
        cg->live |= 1u << i;
        struct move_arg a = {cg, i, 0};
        for (int pass = 0; pass < FREEZE_POLLS; pass++) {
                int want = procs_each(cg, from, move_one, &a);
                int have = procs_each(cg, i, count_one, NULL);
                if (want < 0 || a.failed)
                        return want < 0 ? want : a.failed;
                if (have >= want)
                        break;
        }
        return i;
}

int cgroup_freeze(struct cgroup *cg, bool frozen)
{
        bool v2 = cg->sys->version == CGROUP_V2;
        const struct freezer *fz = v2 ? &freezer_v2 : &freezer_v1;
        int i = v2 ? 0 : frozen ? join_freezer(cg) : group_hier(cg, CG_FREEZER);
        if (i < 0)
                return i;
        if (!frozen)
                return group_write(cg, i, fz->file, fz->off);
        int rc = freeze(cg, i, fz);
        if (!v2 && rc != -EAGAIN && rc < 0)
                return rc;
        if (!v2) {
                /* one forked before the freeze from a process not yet moved:
                 * a task moved into a frozen group freezes */
                struct move_arg a = {cg, i, 0};
                procs_each(cg, group_besides(cg, i), move_one, &a);
        }
        return rc == -EAGAIN ? 0 : rc;
}

int cgroup_destroy(struct cgroup *cg)
{
        if (!cg)
                return 0;
        int rc = group_rmdir(cg);
        if (rc)
                return rc;
        group_free(cg);
        return 0;
}

/* ---- stale groups ---- */

/* The owner pid of "proctor-<pid>-..." names, 0 for any other name. */
static pid_t owner_of(const char *name)
{
        size_t plen = strlen(CG_PREFIX);
        if (strncmp(name, CG_PREFIX, plen) != 0 || !isdigit((unsigned char)name[plen]))
                return 0;
        char *end;
        errno = 0;
        long pid = strtol(name + plen, &end, 10);
        return errno || *end != '-' || pid <= 0 || pid > INT_MAX ? 0 : (pid_t)pid;
}

static bool stale(const char *name)
{
        pid_t pid = owner_of(name);
        return pid > 0 && pid != getpid() && kill(pid, 0) < 0 && errno == ESRCH;
}

/* Names of stale groups in hierarchy i, collected before any is removed. */
static int stale_names(const struct cgroup_sys *sys, int i, char (**names)[CG_NAME_MAX])
{
        int fd = openat(sys->h[i].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        int n = 0, cap = 0;
        *names = NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
                if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
                    strlen(de->d_name) >= CG_NAME_MAX || !stale(de->d_name))
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 8;
                        void *grown = realloc(*names, (size_t)cap * CG_NAME_MAX);
                        if (!grown)
                                break;
                        *names = grown;
                }
                memcpy((*names)[n++], de->d_name, strlen(de->d_name) + 1);
        }
        closedir(d);
        return n;
}

/* Kills what is in a stale group and removes it from every hierarchy;
 * killed processes take a moment to leave, so rmdir is retried briefly. */
static int reap_one(struct cgroup_sys *sys, const char *name)
{
        unsigned all = 0;
        for (int i = 0; i < sys->nhier; i++)
                all |= sys->h[i].fd >= 0 ? 1u << i : 0; /* not a retired hierarchy */
        struct cgroup cg = {.sys = sys, .fd = -1, .made = all, .live = all};
        snprintf(cg.name, sizeof cg.name, "%s", name);
        cgroup_kill(&cg);
        for (int t = 0; t < REAP_RMDIR_TRY; t++) {
                int rc = group_rmdir(&cg);
                if (rc != -EBUSY)
                        return rc == 0;
                nap(NAP_NS);
        }
        return 0;
}

int cgroup_sys_reap_stale(struct cgroup_sys *sys)
{
        int removed = 0;
        for (int i = 0; sys && i < sys->nhier; i++) {
                char(*names)[CG_NAME_MAX];
                int n = stale_names(sys, i, &names);
                for (int k = 0; k < n; k++)
                        removed += reap_one(sys, names[k]);
                free(names);
        }
        return removed;
}
