/* selfrun: what it takes to start proctor's own binary in a foreign root
 * (see selfrun.h). It reads only this process's own mappings; it never
 * copies a library nor writes anything. */
#include "exec/native/selfrun.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct interp_find {
        char path[PATH_MAX];
};

/* The first object dl_iterate_phdr reports is the program itself. */
static int find_interp(struct dl_phdr_info *info, size_t size, void *ud)
{
        struct interp_find *f = ud;

        for (int i = 0; i < info->dlpi_phnum; i++)
                if (info->dlpi_phdr[i].p_type == PT_INTERP)
                        snprintf(f->path, sizeof(f->path), "%s",
                                 (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr));
        return 1;
}

/* Adds the directory of `file` (a resolved path) unless it is there;
 * returns its index, or -E2BIG. */
static int add_dir(struct selfrun *s, const char *file)
{
        const char *slash = strrchr(file, '/');
        size_t n = slash != NULL ? (size_t)(slash - file) : 0;

        if (n == 0 || n >= PATH_MAX)
                return -EINVAL;
        for (unsigned i = 0; i < s->ndirs; i++)
                if (strlen(s->dirs[i]) == n && memcmp(s->dirs[i], file, n) == 0)
                        return (int)i;
        if (s->ndirs == SELFRUN_MAX_DIRS)
                return -E2BIG;
        memcpy(s->dirs[s->ndirs], file, n);
        s->dirs[s->ndirs][n] = '\0';
        snprintf(s->mounts[s->ndirs], sizeof(s->mounts[0]), SELFRUN_LIB "/%u", s->ndirs);
        return (int)s->ndirs++;
}

/* The shared objects mapped now: every library proctor was linked with
 * (and, in a sanitizer build, the sanitizer's runtime). */
static int add_mapped(struct selfrun *s, char *err, size_t errlen)
{
        FILE *f = fopen("/proc/self/maps", "re");
        char line[PATH_MAX + 128], real[PATH_MAX];
        int rc = 0;

        if (f == NULL) {
                snprintf(err, errlen, "cannot read /proc/self/maps: %s", strerror(errno));
                return -errno;
        }
        while (rc >= 0 && fgets(line, sizeof(line), f) != NULL) {
                char *path = strchr(line, '/'), *base;

                if (path == NULL)
                        continue;
                path[strcspn(path, "\n")] = '\0';
                base = strrchr(path, '/') + 1;
                if (strstr(base, ".so") == NULL || strstr(path, " (deleted)") != NULL ||
                    realpath(path, real) == NULL || strcmp(real, s->exe) == 0)
                        continue;
                rc = add_dir(s, real);
        }
        fclose(f);
        if (rc < 0)
                snprintf(err, errlen, "proctor's libraries lie in more than %d directories",
                         SELFRUN_MAX_DIRS);
        return rc < 0 ? rc : 0;
}

int selfrun_probe(struct selfrun *s, char *err, size_t errlen)
{
        struct interp_find in = {{0}};
        char real[PATH_MAX];
        ssize_t n;
        int rc, at;

        memset(s, 0, sizeof(*s));
        n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
        if (n <= 0) {
                snprintf(err, errlen, "cannot find proctor's own binary: %s", strerror(errno));
                return -EIO;
        }
        s->exe[n] = '\0';
        dl_iterate_phdr(find_interp, &in);
        /* A static binary needs nothing of the root it runs in. */
        if (in.path[0] == '\0')
                return 0;
        if (realpath(in.path, real) == NULL) {
                snprintf(err, errlen, "cannot resolve proctor's loader %s: %s", in.path,
                         strerror(errno));
                return -errno;
        }
        if ((at = add_dir(s, real)) < 0 || (rc = add_mapped(s, err, errlen)) < 0) {
                if (at < 0)
                        snprintf(err, errlen, "proctor's loader %s has no directory", real);
                return at < 0 ? at : rc;
        }
        snprintf(s->loader, sizeof(s->loader), "%s%s", s->mounts[at], strrchr(real, '/'));
        for (unsigned i = 0; i < s->ndirs; i++) {
                size_t len = strlen(s->library_path);
                snprintf(s->library_path + len, sizeof(s->library_path) - len, "%s%s",
                         i > 0 ? ":" : "", s->mounts[i]);
        }
        return 0;
}

char *const *selfrun_argv(const struct selfrun *s, char *const *argv, const char **out, size_t cap)
{
        size_t argc = 0, i;

        if (s->loader[0] == '\0' || argv == NULL || argv[0] == NULL ||
            strcmp(argv[0], EXEC_SANDBOX_SELF) != 0)
                return argv;
        while (argv[argc] != NULL)
                argc++;
        if (argc + 4 > cap)
                return argv;
        /* The loader's own options end at the program's path. */
        out[0] = s->loader;
        out[1] = "--library-path";
        out[2] = s->library_path;
        for (i = 0; i <= argc; i++)
                out[3 + i] = argv[i];
        return (char *const *)out;
}
