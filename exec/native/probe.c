/* probe: each fact comes from attempting the thing (a user namespace, a
 * cgroup, the seccomp policy), not from reading version numbers. */
#include "exec/native/probe.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

static int try_userns(void)
{
        struct {
                uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
        } ca = {.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET,
                .exit_signal = SIGCHLD};
        int st;
        pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));

        if (pid == 0)
                _exit(0);
        if (pid < 0)
                return -errno;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EPERM;
}

static bool file_has(const char *path, const char *needle)
{
        char buf[8192];
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        return strstr(buf, needle) != NULL;
}

static int read_int(const char *path)
{
        char buf[32];
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        return atoi(buf);
}

void probe_host(struct probe_report *r)
{
        struct utsname u;
        struct cgroup_sys *cg = NULL;
        struct seccomp_policy *pol = NULL;
        long ll;

        memset(r, 0, sizeof(*r));
        if (uname(&u) == 0)
                snprintf(r->kernel, sizeof(r->kernel), "%s %s %s", u.sysname, u.release, u.machine);
        r->euid = (unsigned)geteuid();
        r->userns = try_userns();
        if (cgroup_sys_open("/sys/fs/cgroup", "/proc/self/cgroup", &cg, r->cgroup_why,
                            sizeof(r->cgroup_why)) == 0 &&
            cg != NULL) {
                r->cgroup = cgroup_sys_version(cg);
                r->controllers = cgroup_sys_controllers(cg);
        }
        cgroup_sys_free(cg);
        errno = 0;
        r->seccomp = prctl(PR_GET_SECCOMP) >= 0;
        ll = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        r->landlock_abi = ll >= 0 ? (int)ll : -errno;
        r->overlayfs = file_has("/proc/filesystems", "\toverlay\n");
        r->tiocsti_legacy = read_int("/proc/sys/dev/tty/legacy_tiocsti");
        r->seccomp_rc = seccomp_policy_build(&pol, r->seccomp_err, sizeof(r->seccomp_err));
        if (r->seccomp_rc == 0) {
                r->nabis = (unsigned)seccomp_policy_abi_counts(pol, r->abis, SECCOMP_MAX_ABIS);
                seccomp_policy_counts(pol, &r->allowed, &r->blocked);
        }
        seccomp_policy_free(pol);
}
