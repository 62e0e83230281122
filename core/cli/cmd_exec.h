/* cmd_exec: `proctor exec [opts] -- CMD [ARG...]`, one command in one
 * execution, output streamed through (or as exec.* events with --json). */
#ifndef PROCTOR_CMD_EXEC_H
#define PROCTOR_CMD_EXEC_H

int cmd_exec_main(int argc, char **argv);

#endif
