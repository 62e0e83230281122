/* counters: takes as many of the per-user kernel counters as it is given
 * (queued real-time signals, open files) and
 * prints how many it got, for the boundary tests of every runtime. Built
 * static: it runs in images without a libc. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define CAP 5000 /* past any bound a sandbox sets */

static volatile sig_atomic_t delivered;

static void on_rt(int sig)
{
        (void)sig;
        delivered++;
}

int main(void)
{
        sigset_t set;
        struct rlimit rl;
        long n;

        sigemptyset(&set);
        sigaddset(&set, SIGRTMIN);
        sigprocmask(SIG_BLOCK, &set, NULL);
        /* kill() past the bound still succeeds (the signal loses its
         * queue entry, and is delivered once more at most): what it got
         * is what arrives once unblocked. The user's count (SigQ) would
         * count other processes of the same user too. */
        signal(SIGRTMIN, on_rt);
        for (n = 0; n < CAP && kill(getpid(), SIGRTMIN) == 0; n++)
                ;
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        printf("sigpending %ld\n", (long)delivered);
        /* the soft limit raised to the hard one, as any program may */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }
        for (n = 0; n < CAP && open("/dev/null", O_RDONLY) >= 0; n++)
                ;
        printf("nofile %ld\n", n);
        fflush(stdout);
        return 0;
}
