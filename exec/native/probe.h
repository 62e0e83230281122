/* probe: what isolation this host offers, measured by trying it, for
 * `proctor doctor` and for choosing mechanisms. Never changes the host
 * beyond short-lived probes it removes again. */
#ifndef PROCTOR_PROBE_H
#define PROCTOR_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/native/cgroup.h"
#include "exec/native/seccomp.h"

struct probe_report {
        char kernel[200];
        unsigned euid;
        int userns; /* 0 usable, else -errno of the attempt */
        enum cgroup_version cgroup;
        unsigned controllers; /* enum cgroup_controller bits */
        char cgroup_why[256]; /* why not (more) cgroups */
        bool seccomp;         /* seccomp filters supported */
        int landlock_abi;     /* >0 ABI version, else -errno */
        bool overlayfs;
        int tiocsti_legacy; /* dev.tty.legacy_tiocsti, -1 unknown */
        int seccomp_rc;     /* building the policy: 0 or -errno */
        char seccomp_err[256];
        struct seccomp_abi_count abis[SECCOMP_MAX_ABIS];
        unsigned nabis;
        unsigned allowed, blocked;
};

void probe_host(struct probe_report *r);

#endif
