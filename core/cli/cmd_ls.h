/* cmd_ls: `proctor ls [--json]`, the live sessions of this user on this
 * host, from their sockets (core/session/ctl.h). */
#ifndef PROCTOR_CMD_LS_H
#define PROCTOR_CMD_LS_H

int cmd_ls_main(int argc, char **argv);

#endif
