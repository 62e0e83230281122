/* sandbox_int: what the sandbox's two sides share, the host's template
 * of a root (sandbox_host.c, made once per engine) and the child that
 * builds it after clone (sandbox.c). Internal to exec/native. */
#ifndef PROCTOR_SANDBOX_INT_H
#define PROCTOR_SANDBOX_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "exec/native/selfrun.h"

#define SB_MAX_FILES 24
#define SB_MAX_LINKS 24
#define SB_MAX_BINDS 40

struct sb_file {
        char path[48]; /* relative to the new root */
        char *data;
        size_t len;
};

struct sb_link {
        char path[48];
        char target[PATH_MAX];
};

struct sb_bind {
        char src[PATH_MAX]; /* absolute host path (under an image's root) */
        char path[48];      /* relative to the new root */
        unsigned long keep; /* locked flags of the source mount to keep */
        bool is_dir;
        bool from_image; /* taken as a tree at birth (see take_image_trees) */
};

struct sandbox_host {
        struct sb_file files[SB_MAX_FILES];
        struct sb_link links[SB_MAX_LINKS];
        struct sb_bind binds[SB_MAX_BINDS];
        unsigned nfiles, nlinks, nbinds;
        unsigned long dev_keep;  /* locked flags of the host's /dev */
        char self_exe[PATH_MAX]; /* proctor's own binary, for `proctor tool` */
        unsigned long self_keep;
        /* In an image's root: the directories of proctor's own libraries,
         * mounted under /.proctor/lib, and its loader (exec/native/selfrun). */
        struct selfrun self_run;
        unsigned long self_run_keep[SELFRUN_MAX_DIRS];
        /* The host's CA certificates, for sandboxes that share its network
         * (host-rooted only: an image brings its own); ca_keep: its locked
         * mount flags. */
        bool ca_store;
        unsigned long ca_keep;
};

#define CA_STORE "/etc/ssl/certs"

#endif
