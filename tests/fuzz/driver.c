/* driver: runs a libFuzzer harness without libFuzzer, so that `make test`
 * can exercise every harness with gcc and ASan: each corpus file named on
 * the command line, then -n deterministic pseudo-random inputs (fresh bytes
 * biased to what parsers of escapes and JSON care about, and mutations of
 * the corpus). It never judges an input itself: a harness fails by
 * aborting, which ends this process with that signal, after the input is
 * saved to the -o file (default ./crash-NAME) to reproduce it with.
 *
 * Usage: NAME [-n COUNT] [-s SEED] [-o CRASHFILE] [FILE|DIR]... */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INPUT_MAX  4096        /* bytes of a generated input */
#define FILE_MAX   (1u << 20)  /* bytes read from one corpus file */
#define SEED_FIXED 0x5eed2025u /* the default, so every run is the same */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Set when built with a sanitizer: called before it ends the process. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

struct input {
        uint8_t *p;
        size_t n;
};

struct corpus {
        struct input *in;
        size_t n, cap;
};

static uint64_t rng_state;
static const uint8_t *cur_input; /* the input running, for save_input */
static size_t cur_len;
static const char *crash_file;

/* Saves the input that brought the harness down; async-signal-safe. */
static void save_input(void)
{
        int fd;

        if (cur_input == NULL)
                return;
        fd = open(crash_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
                if (write(fd, cur_input, cur_len) == (ssize_t)cur_len)
                        if (write(2, "driver: input saved to ", 23) > 0 &&
                            write(2, crash_file, strlen(crash_file)) > 0)
                                (void)!write(2, "\n", 1);
                close(fd);
        }
        cur_input = NULL;
}

static void on_abort(int sig)
{
        save_input();
        signal(sig, SIG_DFL);
        raise(sig);
}

/* splitmix64: small, fast and the same everywhere. */
static uint64_t rng(void)
{
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static size_t below(size_t n)
{
        return n == 0 ? 0 : (size_t)(rng() % n);
}

/* Runs one input from a heap block of exactly its size, as libFuzzer does,
 * so that ASan sees a read one past the end. */
static void run(const uint8_t *p, size_t n)
{
        uint8_t *copy = malloc(n ? n : 1);

        if (copy == NULL) {
                perror("driver");
                exit(2);
        }
        if (n > 0)
                memcpy(copy, p, n);
        cur_input = copy;
        cur_len = n;
        LLVMFuzzerTestOneInput(copy, n);
        cur_input = NULL;
        free(copy);
}

static void corpus_add(struct corpus *c, uint8_t *p, size_t n)
{
        if (c->n == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 16;
                struct input *in = realloc(c->in, cap * sizeof(*in));
                if (in == NULL) {
                        perror("driver");
                        exit(2);
                }
                c->in = in;
                c->cap = cap;
        }
        c->in[c->n++] = (struct input){p, n};
}

static void read_file(struct corpus *c, const char *path)
{
        FILE *f = fopen(path, "rb");
        uint8_t *p, *q;
        size_t n;

        if (f == NULL) {
                fprintf(stderr, "driver: %s: %s\n", path, strerror(errno));
                exit(2);
        }
        p = malloc(FILE_MAX);
        if (p == NULL) {
                perror("driver");
                exit(2);
        }
        n = fread(p, 1, FILE_MAX, f);
        fclose(f);
        q = n > 0 ? realloc(p, n) : NULL; /* shrinking: only the size changes */
        corpus_add(c, q != NULL ? q : p, n);
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every regular file in a directory, in name order so that the
 * mutations below do not depend on the file system. */
static void read_path(struct corpus *c, const char *path)
{
        struct dirent *de;
        struct stat st;
        char **names = NULL, full[4096];
        size_t n = 0, i;
        DIR *d;

        if (stat(path, &st) < 0) {
                fprintf(stderr, "driver: %s: %s\n", path, strerror(errno));
                exit(2);
        }
        if (!S_ISDIR(st.st_mode)) {
                read_file(c, path);
                return;
        }
        d = opendir(path);
        if (d == NULL) {
                fprintf(stderr, "driver: %s: %s\n", path, strerror(errno));
                exit(2);
        }
        while ((de = readdir(d)) != NULL) {
                char **nn;
                if (de->d_name[0] == '.')
                        continue;
                nn = realloc(names, (n + 1) * sizeof(*names));
                if (nn == NULL || (nn[n] = strdup(de->d_name)) == NULL) {
                        perror("driver");
                        exit(2);
                }
                names = nn;
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof(*names), name_cmp);
        for (i = 0; i < n; i++) {
                snprintf(full, sizeof(full), "%s/%s", path, names[i]);
                if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
                        read_file(c, full);
                free(names[i]);
        }
        free(names);
}

/* A byte, most often one that terminal escapes, UTF-8 or JSON give a
 * meaning to. */
static uint8_t interesting(void)
{
        static const uint8_t special[] = {0x1b, '[', ']', ';', '\r', '\n', '\t', 0x7f, '{',
                                          '}',  '"', ':', ',', '\\', ' ',  0x07, 0x00, '='};

        switch (below(8)) {
        case 0:
        case 1:
                return special[below(sizeof(special))];
        case 2:
                return (uint8_t)('0' + below(10));
        case 3:
                return (uint8_t)(0x80 + below(0x40)); /* continuation */
        case 4:
                return (uint8_t)(0xc0 + below(0x40)); /* lead, valid or not */
        case 5:
                return (uint8_t)below(0x20);
        default:
                return (uint8_t)(0x20 + below(0x5f));
        }
}

static size_t fresh(uint8_t *buf)
{
        size_t n = below(8) == 0 ? below(INPUT_MAX + 1) : below(256), i;

        for (i = 0; i < n; i++)
                buf[i] = below(4) == 0 ? (uint8_t)rng() : interesting();
        return n;
}

/* One to eight edits of a copy of a corpus input. */
static size_t mutate(uint8_t *buf, const struct corpus *c)
{
        const struct input *src = &c->in[below(c->n)], *other;
        size_t n = src->n < INPUT_MAX ? src->n : INPUT_MAX, k, edits = 1 + below(8), at, len;

        memcpy(buf, src->p, n);
        for (k = 0; k < edits; k++) {
                at = below(n + 1);
                switch (below(5)) {
                case 0: /* flip a bit */
                        if (n > 0)
                                buf[below(n)] ^= (uint8_t)(1u << below(8));
                        break;
                case 1: /* set a byte */
                        if (n > 0)
                                buf[below(n)] = interesting();
                        break;
                case 2: /* insert a few bytes */
                        len = 1 + below(8);
                        if (n + len > INPUT_MAX)
                                break;
                        memmove(buf + at + len, buf + at, n - at);
                        for (size_t i = 0; i < len; i++)
                                buf[at + i] = interesting();
                        n += len;
                        break;
                case 3: /* delete a few bytes */
                        len = below(n - at + 1) % 16;
                        memmove(buf + at, buf + at + len, n - at - len);
                        n -= len;
                        break;
                default: /* splice in a piece of another input */
                        other = &c->in[below(c->n)];
                        len = below(other->n + 1);
                        if (len > INPUT_MAX - at)
                                len = INPUT_MAX - at;
                        memcpy(buf + at, other->p + below(other->n - len + 1), len);
                        if (at + len > n)
                                n = at + len;
                        break;
                }
        }
        return n;
}

static void usage(void)
{
        fprintf(stderr, "usage: fuzz-driver [-n COUNT] [-s SEED] [-o CRASHFILE] [FILE|DIR]...\n");
        exit(2);
}

int main(int argc, char **argv)
{
        struct corpus c = {0};
        unsigned long long count = 1000, seed = SEED_FIXED, i;
        static uint8_t buf[INPUT_MAX];
        char *end, crash[256];
        const char *base = strrchr(argv[0], '/');
        int opt;
        size_t k;

        snprintf(crash, sizeof(crash), "crash-%s", base != NULL ? base + 1 : argv[0]);
        crash_file = crash;
        while ((opt = getopt(argc, argv, "n:s:o:")) != -1) {
                if (opt == 'o') {
                        crash_file = optarg;
                        continue;
                }
                if (opt != 'n' && opt != 's')
                        usage();
                errno = 0;
                *(opt == 'n' ? &count : &seed) = strtoull(optarg, &end, 0);
                if (errno != 0 || *end != '\0' || end == optarg)
                        usage();
        }
        for (; optind < argc; optind++)
                read_path(&c, argv[optind]);
        signal(SIGABRT, on_abort);
        signal(SIGSEGV, on_abort);
        if (__sanitizer_set_death_callback != NULL)
                __sanitizer_set_death_callback(save_input);
        for (k = 0; k < c.n; k++)
                run(c.in[k].p, c.in[k].n);
        rng_state = seed;
        for (i = 0; i < count; i++) {
                size_t n = c.n > 0 && below(2) == 0 ? mutate(buf, &c) : fresh(buf);
                run(buf, n);
        }
        printf("%s: %zu corpus inputs and %llu generated inputs ran\n", argv[0], c.n, count);
        for (k = 0; k < c.n; k++)
                free(c.in[k].p);
        free(c.in);
        return 0;
}
