/* seccomp: the sandbox's syscall allowlist, compiled once with libseccomp to
 * BPF and loaded in the child right before exec. Loading must stay
 * async-signal-safe: no allocation, no libseccomp calls in the child. */
#ifndef PROCTOR_SECCOMP_H
#define PROCTOR_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct seccomp_policy;

/* How one syscall ABI fares under the policy: "x86_64", "i386", "x32".
 * Counted over libseccomp's table of that ABI's syscalls. */
struct seccomp_abi_count {
        const char *abi;
        unsigned allowed; /* syscalls of that ABI the filter lets through */
        unsigned blocked; /* the rest of that ABI's table */
};

/* The native ABI plus the foreign ones a kernel of that arch may accept
 * (i386 and x32 beside x86_64); the filter refuses the foreign ones whole. */
#define SECCOMP_MAX_ABIS 3

/* Builds the allowlist (default action EPERM; non-native arches refused;
 * dangerous ioctls, socket families and clone flags denied) and exports it. */
int seccomp_policy_build(struct seccomp_policy **out, char *err, size_t errlen);
void seccomp_policy_free(struct seccomp_policy *p);

/* How many of the kernel's syscalls the policy allows and how many it
 * blocks, summed over every ABI in seccomp_policy_abi_counts. */
void seccomp_policy_counts(const struct seccomp_policy *p, unsigned *allowed, unsigned *blocked);

/* The same counts per ABI, native first; fills at most max entries and
 * returns how many it filled. */
size_t seccomp_policy_abi_counts(const struct seccomp_policy *p, struct seccomp_abi_count *out,
                                 size_t max);

/* Sets no_new_privs and installs the filter on the calling thread. Only
 * raw syscalls: safe between clone and exec. Returns 0 or -errno. */
int seccomp_policy_load(const struct seccomp_policy *p);

/* Stacks a filter refusing socket(AF_UNIX) and datagram socketpairs
 * (EPERM) on the calling thread, for a sandbox in the host's network
 * namespace or acting as root in a workspace; load after the policy
 * (no_new_privs set). Raw syscalls only. 0 or -errno. */
int seccomp_load_no_unix_sockets(void);

/* The same policy, compiled by libseccomp when proctor was built
 * (build/gen/seccomp_policy.inc), so that no process pays for compiling it
 * at run time. Never freed. */
const struct seccomp_policy *seccomp_policy_builtin(void);

/* For the build: writes p as C source that defines the builtin policy. */
int seccomp_policy_write_c(const struct seccomp_policy *p, FILE *f);

/* The same rules as a seccomp profile in the JSON format of Docker Engine
 * and the OCI runtime spec (malloc'ed; NULL when out of memory), for an
 * engine to load in a container: one filter, so each call that the guard
 * narrows is allowed only with safe arguments instead (modes without
 * setuid/setgid bits, no device nodes). ioctl is allowed whole there: a
 * container's terminal, if any, is its own, never the operator's. */
char *seccomp_policy_profile_json(void);

/* True when both policies load the same BPF programs. */
bool seccomp_policy_equal(const struct seccomp_policy *a, const struct seccomp_policy *b);

#endif
