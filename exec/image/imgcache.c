/* imgcache: the image cache of exec/image. Its directory, the record of
 * its format (an older cache is emptied once), the layers/ and roots/
 * beneath it, the cap on its size (the least recently used images go
 * first, then the layers no image needs), and `proctor images`: the
 * listing and the prune. */
#include "exec/image/image_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the cache ---- */

int image_cache_dir(char *buf, size_t len)
{
        const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char *p;
        int n;

        if (x != NULL && x[0] == '/')
                n = snprintf(buf, len, "%s/proctor/images", x);
        else if (home != NULL && home[0] == '/')
                n = snprintf(buf, len, "%s/.cache/proctor/images", home);
        else
                return -ENOENT;
        if (n < 0 || (size_t)n >= len)
                return -ENAMETOOLONG;
        for (p = buf + 1; *p != '\0'; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* The cache's format: 2 since every digest is verified. An older cache
 * (no such record) was filled without checking them, so none of it is
 * trusted: its roots and layers are removed once, then the record made. */
#define IMG_CACHE_FORMAT "2\n"

void cache_upgrade(void)
{
        char dir[PATH_MAX], buf[8];
        int at, fd;
        ssize_t n;

        if (image_cache_dir(dir, sizeof(dir)) < 0 ||
            (at = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                return;
        fd = openat(at, "format", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
        if (fd >= 0)
                close(fd);
        if (n != (ssize_t)strlen(IMG_CACHE_FORMAT) ||
            memcmp(buf, IMG_CACHE_FORMAT, (size_t)n) != 0) {
                img_remove_at(at, "roots");
                img_remove_at(at, "layers");
                unlinkat(at, "format", 0);
                fd = openat(at, "format", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            0600);
                if (fd >= 0) {
                        if (write(fd, IMG_CACHE_FORMAT, strlen(IMG_CACHE_FORMAT)) < 0)
                                unlinkat(at, "format", 0);
                        close(fd);
                }
        }
        close(at);
}

int cache_sub(char *buf, size_t len, const char *sub, char *err, size_t errlen)
{
        int rc = image_cache_dir(buf, len);
        size_t n = strlen(buf);

        if (rc == 0 && snprintf(buf + n, len - n, "/%s", sub) >= (int)(len - n))
                rc = -ENAMETOOLONG;
        if (rc == 0 && mkdir(buf, 0700) != 0 && errno != EEXIST)
                rc = -errno;
        if (rc < 0)
                snprintf(err, errlen, "cannot make the image cache %s: %s", buf, strerror(-rc));
        return rc;
}

/* The layers/HEX directory of a cached layer (hex may be a prefix of
 * a longer string: its first 64 digits count). */
int layer_path(char *buf, size_t len, const char *hex, char *err, size_t errlen)
{
        char dir[PATH_MAX];
        int rc = cache_sub(dir, sizeof(dir), "layers", err, errlen);

        if (rc == 0 && snprintf(buf, len, "%s/%.64s", dir, hex) >= (int)len)
                rc = -ENAMETOOLONG;
        return rc;
}

/* ---- the cache's cap: least recently used images go first ---- */

struct cached {
        char hex[65];
        time_t used;
        uint64_t bytes;
        json_t *layers; /* the diff_ids it was assembled from, or NULL */
};

static int cached_older(const void *a, const void *b)
{
        const struct cached *x = a, *y = b;

        return x->used < y->used ? -1 : x->used > y->used;
}

/* The complete images under roots (their records read), oldest first;
 * *n gets how many. NULL when there are none or no memory. */
static struct cached *cached_list(const char *roots, size_t *n)
{
        struct cached *c = NULL;
        struct dirent *de;
        DIR *d = opendir(roots);

        *n = 0;
        while (d != NULL && (de = readdir(d)) != NULL) {
                char path[PATH_MAX + 300];
                struct stat st;
                json_t *j;
                if (!img_hex64(de->d_name) || de->d_name[64] != '\0')
                        continue;
                snprintf(path, sizeof(path), "%s/%s/image.json", roots, de->d_name);
                if ((j = json_load_file(path, 0, NULL)) == NULL)
                        continue;
                struct cached *more = realloc(c, (*n + 1) * sizeof(*c));
                if (more == NULL) {
                        json_decref(j);
                        break;
                }
                c = more;
                snprintf(c[*n].hex, sizeof(c[*n].hex), "%.64s", de->d_name);
                snprintf(path, sizeof(path), "%s/%s", roots, de->d_name);
                c[*n].used = stat(path, &st) == 0 ? st.st_mtime : 0;
                c[*n].bytes = (uint64_t)json_integer_value(json_object_get(j, "bytes"));
                c[*n].layers = json_incref(json_object_get(j, "layers"));
                json_decref(j);
                (*n)++;
        }
        if (d != NULL)
                closedir(d);
        if (c != NULL)
                qsort(c, *n, sizeof(*c), cached_older);
        return c;
}

/* Removes the layers no image left under roots was assembled from. */
static void layers_collect(const char *roots, struct cached *c, size_t n)
{
        char layers[PATH_MAX];
        struct dirent *de;
        DIR *d;

        snprintf(layers, sizeof(layers), "%.*s/layers", (int)(strrchr(roots, '/') - roots), roots);
        if ((d = opendir(layers)) == NULL)
                return;
        while ((de = readdir(d)) != NULL) {
                bool used = false;
                if (!img_hex64(de->d_name) || de->d_name[64] != '\0')
                        continue; /* ".", "..", a layer still being unpacked */
                for (size_t i = 0; i < n && !used; i++) {
                        size_t k;
                        json_t *l;
                        json_array_foreach (c[i].layers, k, l)
                                used = used || (json_is_string(l) &&
                                                strcmp(json_string_value(l), de->d_name) == 0);
                }
                if (!used)
                        img_remove_at(dirfd(d), de->d_name);
        }
        closedir(d);
}

/* Keeps the sum of the cached images' sizes (as `proctor images` lists
 * them) within cap, removing the least recently used images, never
 * `keep` (the one just stored), and then the layers no image needs. */
void cache_enforce(const char *roots, uint64_t cap, const char *keep)
{
        size_t n, i;
        struct cached *c = cached_list(roots, &n);
        bool removed = false;
        uint64_t sum = 0;

        for (i = 0; i < n; i++)
                sum += c[i].bytes;
        for (i = 0; i < n && sum > cap; i++) {
                char path[PATH_MAX + 80];
                if (strcmp(c[i].hex, keep) == 0)
                        continue;
                snprintf(path, sizeof(path), "%s/%s", roots, c[i].hex);
                if (img_remove_at(AT_FDCWD, path) < 0)
                        continue;
                sum -= c[i].bytes;
                json_decref(c[i].layers);
                c[i].layers = NULL;
                removed = true;
        }
        if (removed)
                layers_collect(roots, c, n);
        for (i = 0; i < n; i++)
                json_decref(c[i].layers);
        free(c);
}

int image_cache_list(void (*fn)(const struct image_entry *e, void *ud), void *ud, char *err,
                     size_t errlen)
{
        char roots[PATH_MAX];
        struct dirent *de;
        DIR *d;
        int rc = cache_sub(roots, sizeof(roots), "roots", err, errlen);

        if (rc < 0)
                return rc;
        if ((d = opendir(roots)) == NULL)
                return -errno;
        while ((de = readdir(d)) != NULL) {
                struct image_entry e = {.bytes = 0};
                char path[PATH_MAX + 300];
                struct stat st;
                json_t *j;
                if (!img_hex64(de->d_name))
                        continue; /* ".", "..", an unpack still under way */
                snprintf(path, sizeof(path), "%s/%s/image.json", roots, de->d_name);
                if ((j = json_load_file(path, 0, NULL)) == NULL)
                        continue;
                snprintf(e.ref, sizeof(e.ref), "%s",
                         json_string_value(json_object_get(j, "ref")) ?: "?");
                snprintf(e.digest, sizeof(e.digest), "sha256:%.64s", de->d_name);
                e.bytes = (uint64_t)json_integer_value(json_object_get(j, "bytes"));
                snprintf(path, sizeof(path), "%s/%s", roots, de->d_name);
                if (stat(path, &st) == 0)
                        e.last_used = st.st_mtime;
                json_decref(j);
                fn(&e, ud);
        }
        closedir(d);
        return 0;
}

int image_cache_prune(unsigned *images, char *err, size_t errlen)
{
        char dir[PATH_MAX];
        struct dirent *de;
        DIR *d;
        int rc;

        *images = 0;
        if ((rc = cache_sub(dir, sizeof(dir), "roots", err, errlen)) < 0)
                return rc;
        if ((d = opendir(dir)) == NULL)
                return -errno;
        while ((de = readdir(d)) != NULL)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                        *images += img_hex64(de->d_name);
                        if ((rc = img_remove_at(dirfd(d), de->d_name)) < 0)
                                break;
                }
        closedir(d);
        if (rc == 0) {
                char *slash = strrchr(dir, '/');
                snprintf(slash, sizeof(dir) - (size_t)(slash - dir), "/layers");
                rc = img_remove_at(AT_FDCWD, dir);
        }
        if (rc < 0)
                snprintf(err, errlen, "cannot prune %s: %s", dir, strerror(-rc));
        return rc;
}
