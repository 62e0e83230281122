/* pystub: the proctor-owned Python program that runs a run_python_code call
 * (cold, or started ahead in a warm sandbox). The code comes on stdin, then
 * EOF; the stub never takes anything from the workspace before it. */
#ifndef PROCTOR_PYSTUB_H
#define PROCTOR_PYSTUB_H

extern const char exec_python_stub[];
/* python3 -c STUB: the command line of every run_python_code execution. */
extern char *const exec_python_argv[];

#endif
