/* seccomp_gen: build-time generator. Compiles the sandbox's seccomp policy
 * with libseccomp and writes it out as C, so proctor loads a ready BPF
 * program instead of compiling one at every start. */
#include <stdio.h>

#include "exec/native/seccomp.h"

int main(int argc, char **argv)
{
        struct seccomp_policy *p;
        char err[256];
        FILE *f;
        int rc;

        if (argc != 2) {
                fprintf(stderr, "usage: seccomp_gen OUTPUT.inc\n");
                return 2;
        }
        if (seccomp_policy_build(&p, err, sizeof(err)) < 0) {
                fprintf(stderr, "seccomp_gen: %s\n", err);
                return 1;
        }
        f = fopen(argv[1], "w");
        if (f == NULL) {
                perror(argv[1]);
                return 1;
        }
        rc = seccomp_policy_write_c(p, f);
        if (fclose(f) != 0 || rc < 0) {
                fprintf(stderr, "seccomp_gen: cannot write %s\n", argv[1]);
                return 1;
        }
        seccomp_policy_free(p);
        return 0;
}
