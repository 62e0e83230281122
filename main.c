/* proctor: command-line entry. Parses the subcommand and hands over to the
 * layer that implements it; nothing else lives here. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/cmd_exec.h"
#include "core/doctor.h"
#include "core/options.h"

static void print_help(void)
{
        printf("proctor %s: watch and steer an LLM agent while it works\n\n"
               "usage:\n"
               "  proctor exec [options] -- CMD [ARG...]  run one command in one execution\n"
               "  proctor doctor [--json]                 what isolation this host offers\n"
               "  proctor --help | --version\n\n"
               "options:\n%s\n"
               "'proctor COMMAND --help' describes one command.\n",
               PROCTOR_VERSION, options_help);
}

int main(int argc, char **argv)
{
        const char *cmd = argc > 1 ? argv[1] : NULL;

        /* Writes to a closed pipe must fail with EPIPE, not kill proctor;
         * executions get the default disposition back before exec. */
        signal(SIGPIPE, SIG_IGN);
        if (cmd == NULL || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
            strcmp(cmd, "help") == 0) {
                print_help();
                return cmd == NULL ? 2 : 0;
        }
        if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
                printf("proctor %s\n", PROCTOR_VERSION);
                return 0;
        }
        if (strcmp(cmd, "exec") == 0)
                return cmd_exec_main(argc - 1, argv + 1);
        if (strcmp(cmd, "doctor") == 0)
                return doctor_main(argc - 1, argv + 1);
        if (cmd[0] == '-')
                fprintf(stderr, "proctor: unknown option '%s' (try 'proctor --help')\n", cmd);
        else
                fprintf(stderr, "proctor: unknown command '%s' (try 'proctor --help')\n", cmd);
        return 2;
}
