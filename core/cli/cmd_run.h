/* cmd_run: `proctor run [opts] PROMPT`, a headless session. */
#ifndef PROCTOR_CMD_RUN_H
#define PROCTOR_CMD_RUN_H

int cmd_run_main(int argc, char **argv);

#endif
