/* floor: the least a sandbox with bwrap's namespaces and mounts costs as a
 * whole process, as a yardstick for `proctor exec` against bwrap in the cli
 * benchmark. It does only the kernel work both must do: one clone3 with new
 * user, pid, mount, network, ipc, uts and cgroup namespaces; a tmpfs root
 * with /usr bound read-only and its links, /proc, a /dev of bound device
 * nodes, /tmp and the workspace; pivot_root; then it forks and execs the
 * command as the child of pid 1 and reaps it. No cgroup, no seccomp, no
 * environment rebuild, no limits, no stats, no error reporting beyond the
 * exit code: not a sandbox anyone should use, only the floor under one.
 *
 * Usage: floor WORKSPACE CMD [ARG...] */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

struct clone_args_floor {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void die(const char *what)
{
        fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
        _exit(125);
}

static void in_root(const char *root, const char *rel, char *out, size_t len)
{
        snprintf(out, len, "%s/%s", root, rel);
}

static void bind(const char *root, const char *src, const char *rel, bool dir, bool ro)
{
        char dst[4096];
        int fd;

        in_root(root, rel, dst, sizeof(dst));
        if (dir) {
                if (mkdir(dst, 0755) != 0)
                        die(dst);
        } else {
                fd = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                if (fd < 0)
                        die(dst);
                close(fd);
        }
        if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
                die(src);
        if (ro && mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
                        NULL) != 0)
                die("remount read-only");
}

static void fresh(const char *root, const char *rel, const char *type, unsigned long flags)
{
        char dst[4096];

        in_root(root, rel, dst, sizeof(dst));
        if (mkdir(dst, 0755) != 0 || mount(type, dst, type, flags, NULL) != 0)
                die(dst);
}

static void build_and_run(const char *root, const char *ws, char **cmd)
{
        static const char *const links[][2] = {
            {"usr/bin", "bin"}, {"usr/lib", "lib"}, {"usr/lib64", "lib64"}, {"usr/sbin", "sbin"}};
        static const char *const devs[] = {"null", "zero", "full", "random", "urandom", "tty"};
        char path[4096], src[64];
        size_t i;
        pid_t pid;
        int st;

        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
                die("make / private");
        if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
                die("root tmpfs");
        bind(root, "/usr", "usr", true, true);
        for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
                in_root(root, links[i][1], path, sizeof(path));
                if (symlink(links[i][0], path) != 0)
                        die(path);
        }
        fresh(root, "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC);
        fresh(root, "dev", "tmpfs", MS_NOSUID | MS_NOEXEC);
        for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
                snprintf(src, sizeof(src), "/dev/%s", devs[i]);
                snprintf(path, sizeof(path), "dev/%s", devs[i]);
                bind(root, src, path, false, false);
        }
        fresh(root, "tmp", "tmpfs", MS_NOSUID | MS_NODEV);
        bind(root, ws, "workspace", true, false);
        in_root(root, "oldroot", path, sizeof(path));
        if (mkdir(path, 0700) != 0 || syscall(SYS_pivot_root, root, path) != 0)
                die("pivot_root");
        if (chdir("/") != 0 || umount2("/oldroot", MNT_DETACH) != 0 || rmdir("/oldroot") != 0)
                die("detach the old root");
        if (chdir("/workspace") != 0)
                die("/workspace");
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                execvp(cmd[0], cmd);
                die(cmd[0]);
        }
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        die("waitpid");
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static void write_file(pid_t pid, const char *file, const char *text)
{
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
                die(path);
        close(fd);
}

int main(int argc, char **argv)
{
        struct clone_args_floor ca;
        char root[] = "/tmp/proctor-floor-XXXXXX", map[64], go;
        int sync[2], st;
        pid_t pid;

        if (argc < 3) {
                fprintf(stderr, "usage: floor WORKSPACE CMD [ARG...]\n");
                return 2;
        }
        if (mkdtemp(root) == NULL || pipe2(sync, O_CLOEXEC) != 0)
                die("set up");
        memset(&ca, 0, sizeof(ca));
        ca.flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC |
                   CLONE_NEWUTS | CLONE_NEWCGROUP;
        ca.exit_signal = SIGCHLD;
        pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid < 0)
                die("clone3");
        if (pid == 0) {
                close(sync[1]);
                if (read(sync[0], &go, 1) != 1)
                        _exit(125);
                build_and_run(root, argv[1], argv + 2);
        }
        close(sync[0]);
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)getuid());
        write_file(pid, "uid_map", map);
        write_file(pid, "setgroups", "deny");
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)getgid());
        write_file(pid, "gid_map", map);
        if (write(sync[1], "g", 1) != 1)
                die("release");
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        die("waitpid");
        rmdir(root);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
