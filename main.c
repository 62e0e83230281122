/* proctor: command-line entry. Parses the subcommand and hands over to the
 * layer that implements it; nothing else lives here. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "core/cli/cmd_exec.h"
#include "core/cli/cmd_images.h"
#include "core/cli/cmd_ls.h"
#include "core/cli/cmd_run.h"
#include "core/session/config.h"
#include "core/cli/doctor.h"
#include "core/cli/mcp_cmd.h"
#include "core/session/options.h"
#include "core/tools/tools.h"
#include "core/session/trace.h"
#include "exec/docker/docker_init.h"
#include "exec/native/env.h"
#include "tui/tui.h"

#ifdef __SANITIZE_ADDRESS__
/* A sanitizer build's file tools run inside sandboxes, where the leak
 * checker cannot stop the world (its tracer needs ptrace and getdents,
 * which the seccomp policy refuses) and would turn every result into its
 * fatal error: it stays off there; the unit tests check the tools' leaks. */
static bool in_tool;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
        return in_tool;
}
#endif

static void print_help(void)
{
        printf("proctor %s: watch and steer an LLM agent while it works\n\n"
               "usage:\n"
               "  proctor [options]                       the supervisor (setup screen)\n"
               "  proctor run [options] PROMPT            a whole agent session, headless\n"
               "  proctor run --resume ID|TRACE PROMPT    ...going on with an ended session\n"
               "  proctor resume [ID|TRACE] [options]     the same in the supervisor (default:\n"
               "                                          the newest ended one here)\n"
               "  proctor exec [options] -- CMD [ARG...]  run one command in one execution\n"
               "  proctor replay [--speed N|max] TRACE    play a recorded session, read-only\n"
               "  proctor replay --summary TRACE          what happened in a recorded session\n"
               "  proctor doctor [--json]                 what isolation this host offers\n"
               "  proctor mcp list [options]              MCP servers, their state and tools\n"
               "  proctor images [prune]                  the image cache for --image\n"
               "  proctor ls [--json]                     this user's live sessions\n"
               "  proctor attach [--read-only] [ID]       the live view of one (default: the\n"
               "                                          newest); --read-only sends nothing\n"
               "  proctor --help | --version\n\n"
               "options (every command):\n%s\n"
               "a session's options (the supervisor and run):\n%s%s" OPTIONS_HELP_RESUME "\n"
               "the screen's options (the supervisor and replay):\n%s"
               "  --speed N|max               replay: N times as fast as recorded, or max\n\n"
               "'proctor COMMAND --help' describes one command; 'man proctor' all of them.\n",
               PROCTOR_VERSION, options_help, options_help_session, options_help_agent,
               options_help_screen);
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
        int rc;

        /* proctor holds the API key: no process of the same user (a tool in
         * local mode, say) may read its memory through /proc/PID/mem or
         * ptrace, nor find it in a core dump. Children get their own
         * memory's flag back at exec; sandboxes keep the id maps working
         * (exec/spawn.c do_clone). Root's processes can still read it. */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        env_process_init(argc, argv);
        /* Writes to a closed pipe must fail with EPIPE, not kill proctor;
         * executions get the default disposition back before exec. */
        signal(SIGPIPE, SIG_IGN);
        rc = dispatch(argc, argv);
        config_release(); /* the options of any subcommand point into it */
        return rc;
}

static int dispatch(int argc, char **argv)
{
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (cmd == NULL || (cmd[0] == '-' && cmd[1] == '-' && strcmp(cmd, "--help") != 0 &&
                            strcmp(cmd, "--version") != 0))
                return tui_main(argc, argv);
        if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
                print_help();
                return 0;
        }
        if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
                printf("proctor %s\n", PROCTOR_VERSION);
                return 0;
        }
        if (strcmp(cmd, "exec") == 0)
                return cmd_exec_main(argc - 1, argv + 1);
        if (strcmp(cmd, "doctor") == 0)
                return doctor_main(argc - 1, argv + 1);
        if (strcmp(cmd, "mcp") == 0)
                return mcp_cmd_main(argc - 1, argv + 1);
        if (strcmp(cmd, "images") == 0)
                return cmd_images_main(argc - 1, argv + 1);
        if (strcmp(cmd, "ls") == 0)
                return cmd_ls_main(argc - 1, argv + 1);
        if (strcmp(cmd, "attach") == 0)
                return tui_attach_main(argc - 1, argv + 1);
        if (strcmp(cmd, "run") == 0)
                return cmd_run_main(argc - 1, argv + 1);
        if (strcmp(cmd, "resume") == 0)
                return tui_resume_main(argc - 1, argv + 1);
        if (strcmp(cmd, "replay") == 0) {
                for (int i = 2; i < argc; i++)
                        if (strcmp(argv[i], "--summary") == 0)
                                return trace_summary_main(argc - 1, argv + 1);
                return tui_replay_main(argc - 1, argv + 1);
        }
        /* proctor's supervisor inside each --runtime docker container */
        if (strcmp(cmd, DOCKER_INIT_CMD) == 0) {
#ifdef __SANITIZE_ADDRESS__
                in_tool = true;
#endif
                return docker_init_main(argc - 1, argv + 1);
        }
        /* used inside sandboxes to run the file tools */
        if (strcmp(cmd, "tool") == 0) {
#ifdef __SANITIZE_ADDRESS__
                in_tool = true;
#endif
                return tools_main(argc - 1, argv + 1);
        }
        if (cmd[0] == '-')
                fprintf(stderr, "proctor: unknown option '%s' (try 'proctor --help')\n", cmd);
        else
                fprintf(stderr, "proctor: unknown command '%s' (try 'proctor --help')\n", cmd);
        return 2;
}
