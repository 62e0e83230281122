/* pystub: the Python program every run_python_code call runs, warm or cold:
 * it reads the code from stdin to its end and runs it as `python3 -c CODE`
 * would. It must never print, write a file or read the workspace before the
 * code is in, so that a sandbox started ahead of the call looks fresh to it. */
#include "exec/native/pystub.h"

#include <stddef.h>

#include "exec/native/sandbox.h"

_Static_assert(SANDBOX_EXIT_FD == 1000, "the stub's exit channel is fd 1000");

/* Why each step (see docs/performance.md, "Warm interpreters"):
 * - '' (the working directory, the workspace) is out of sys.path while the
 *   interpreter warms up, so nothing is imported from the workspace before
 *   the call, and the modules imported ahead come from the standard library.
 * - Modules are imported ahead only when the code is not there yet (a warm
 *   sandbox): a cold call goes straight on. If the workspace holds a file
 *   that would shadow one of them, all of them are forgotten again, so the
 *   code imports what `python3 -c` would.
 * - The code runs in the main module's own namespace, emptied of the stub's
 *   name; argv and orig_argv are those of `python3 -c CODE`; a traceback
 *   leaves out the stub's frame; SystemExit codes and messages, 1 for an
 *   uncaught exception and SIGINT for KeyboardInterrupt are `python3 -c`'s.
 *   stdin is at its end after the code: input() gets EOFError. Output
 *   buffering is the interpreter's, untouched.
 * - The end does what the interpreter's own shutdown does that a program
 *   can see, in its order: wait for non-daemon threads, atexit handlers,
 *   flush stdout and stderr (120 when that fails), the main module's names
 *   set to None (underscored first) and a collection, so that __del__ runs
 *   and unclosed files are flushed, a last flush; then _exit. The full
 *   teardown of every module would cost more than the rest of the call
 *   (about 6 ms of 7 here); objects that only other modules still hold are
 *   not finalized (their files are not flushed), a difference from
 *   `python3 -c`. gc.freeze() keeps the collection to what the code made.
 * - In a sandbox the init hands the stub an exit channel at fd 1000
 *   (SANDBOX_EXIT_FD), made close-on-exec here first thing so that no
 *   program the code runs gets it. At the end, if fd 1000 is still that
 *   pipe, the stub closes stdout and stderr and writes its status there:
 *   the init reports it and kills the rest at once, so the call does not
 *   wait for the kernel to free the stub's address space (the exit itself,
 *   about 0.65 ms). The code can write there too, which only ends its own
 *   sandbox early with a status of its choice, as os._exit can. */
const char exec_python_stub[] =
    "def _proctor_warm():\n"
    "    import os, sys\n"
    "    del globals()['_proctor_warm']\n"
    "    try:\n"
    "        os.set_inheritable(1000, False)\n"
    "        ch = os.fstat(1000)\n"
    "        ch = (ch.st_dev, ch.st_ino) if ch.st_mode & 0o170000 == 0o010000 else None\n"
    "    except OSError:\n"
    "        ch = None\n"
    "    path0 = sys.path.pop(0) if sys.path[:1] == [''] else None\n"
    "    os.set_blocking(0, False)\n"
    "    try:\n"
    "        first = os.read(0, 65536)\n"
    "    except BlockingIOError:\n"
    "        first = None\n"
    "    os.set_blocking(0, True)\n"
    "    extra = ()\n"
    "    if first is None:\n"
    "        before = set(sys.modules)\n"
    "        for m in ('json', 're', 'collections', 'itertools', 'functools', 'math', 'random',\n"
    "                  'datetime', 'typing', 'dataclasses', 'pathlib', 'textwrap', 'string'):\n"
    "            try:\n"
    "                __import__(m)\n"
    "            except Exception:\n"
    "                pass\n"
    "        extra = set(sys.modules) - before\n"
    "        first = b''\n"
    "    tops = {m.partition('.')[0] for m in extra}\n"
    "    parts = [first]\n"
    "    while parts[-1] or len(parts) == 1:\n"
    "        parts.append(os.read(0, 1 << 20))\n"
    "    code = b''.join(parts).decode('utf-8', 'surrogateescape')\n"
    "    if path0 is not None:\n"
    "        sys.path.insert(0, path0)\n"
    "    if extra:\n"
    "        try:\n"
    "            names = os.listdir(path0 or '.')\n"
    "        except OSError:\n"
    "            names = []\n"
    "        if not tops.isdisjoint(n.partition('.')[0] for n in names):\n"
    "            for m in extra:\n"
    "                del sys.modules[m]\n"
    "    if len(sys.orig_argv) >= 3:\n"
    "        sys.orig_argv[-1] = code\n"
    "    g = sys.modules['__main__'].__dict__\n"
    "    import atexit, gc\n"
    "    gc.freeze()\n"
    "    rc, sigint = 0, False\n"
    "    try:\n"
    "        exec(compile(code, '<string>', 'exec', dont_inherit=True), g)\n"
    "    except SystemExit as e:\n"
    "        c = e.code\n"
    "        if c is None:\n"
    "            rc = 0\n"
    "        elif isinstance(c, int):\n"
    "            rc = c & 0xff\n"
    "        else:\n"
    "            try:\n"
    "                print(c, file=sys.stderr)\n"
    "            except Exception:\n"
    "                pass\n"
    "            rc = 1\n"
    "        del e, c\n"
    "    except BaseException as e:\n"
    "        tb = e.__traceback__.tb_next\n"
    "        e.__traceback__ = tb\n"
    "        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb\n"
    "        sys.excepthook(type(e), e, tb)\n"
    "        sigint = isinstance(e, KeyboardInterrupt)\n"
    "        rc = 1\n"
    "        del e, tb\n"
    "    t = sys.modules.get('threading')\n"
    "    if t is not None:\n"
    "        try:\n"
    "            t._shutdown()\n"
    "        except BaseException:\n"
    "            pass\n"
    "    atexit._run_exitfuncs()\n"
    "    def flush():\n"
    "        r = 0\n"
    "        for f in (sys.stdout, sys.stderr):\n"
    "            try:\n"
    "                f.flush()\n"
    "            except Exception:\n"
    "                r = 120\n"
    "        return r\n"
    "    rc = flush() or rc\n"
    "    for first in (True, False):\n"
    "        for k in list(g):\n"
    "            if k != '__builtins__' and k.startswith('_') == first:\n"
    "                g[k] = None\n"
    "    gc.collect()\n"
    "    rc = flush() or rc\n"
    "    if sigint:\n"
    "        import signal\n"
    "        signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "        os.kill(os.getpid(), signal.SIGINT)\n"
    "    if ch is not None:\n"
    "        try:\n"
    "            st = os.fstat(1000)\n"
    "            ch = (st.st_dev, st.st_ino) == ch\n"
    "        except OSError:\n"
    "            ch = False\n"
    "    if ch:\n"
    "        for fd in (1, 2):\n"
    "            try:\n"
    "                os.close(fd)\n"
    "            except OSError:\n"
    "                pass\n"
    "        try:\n"
    "            os.write(1000, bytes((rc & 0xff,)))\n"
    "        except OSError:\n"
    "            pass\n"
    "    os._exit(rc)\n"
    "_proctor_warm()\n";

char *const exec_python_argv[] = {"python3", "-c", (char *)exec_python_stub, NULL};
