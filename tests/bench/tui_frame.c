/* tui_frame: the time to draw one full frame of the live view (header,
 * transcript, tool calls, executions with their graphs, status) from a view
 * model holding 10,000 tool calls and 64 live executions, into an
 * off-screen 160x48 terminal. Target: median under 2 ms. Then the same with
 * the detail view open on a call that streams 16 KiB (400 lines) between
 * frames, far past the 1 MiB the model keeps: the view is fed only what
 * arrived, so a frame should cost about the same.
 *
 * Usage: tui_frame [-f FRAMES] */
#include "bench.h"

#include <jansson.h>

#include "core/view/viewmodel.h"
#include "tui/tui.h"

static uint64_t seq;

static void feed(struct viewmodel *vm, const char *type, json_t *fields)
{
        json_object_set_new(fields, "seq", json_integer((json_int_t)++seq));
        json_object_set_new(fields, "t_ms", json_integer((json_int_t)seq));
        json_object_set_new(fields, "type", json_string(type));
        viewmodel_event(fields, vm);
        json_decref(fields);
}

static int cmp(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* 400 lines, about 16 KiB: a flooding tool's output between two frames */
static void stream_chunk(struct viewmodel *vm, int frame, void *ud)
{
        static char chunk[400 * 64];
        size_t o = 0;
        int i;

        for (i = 0; i < 400; i++)
                o += (size_t)snprintf(chunk + o, sizeof(chunk) - o,
                                      "frame %6d line %3d of a flooding tool's output\n", frame, i);
        feed(vm, "tool.output",
             json_pack("{s:s,s:s,s:s}", "call_id", (const char *)ud, "stream", "stdout", "data",
                       chunk));
}

static void report(const char *what, uint64_t *ns, int frames)
{
        qsort(ns, (size_t)frames, sizeof(*ns), cmp);
        printf("| %s | %.0f | %.0f |\n", what, (double)ns[frames / 2] / 1000.0,
               (double)ns[frames * 9 / 10] / 1000.0);
}

int main(int argc, char **argv)
{
        struct viewmodel *vm = viewmodel_new();
        int frames = 500, c, i;
        uint64_t *ns;
        char id[32];

        while ((c = getopt(argc, argv, "f:")) != -1) {
                if (c != 'f')
                        bench_die("usage: tui_frame [-f FRAMES]");
                frames = atoi(optarg);
        }
        if (frames < 1)
                bench_die("frames must be positive");
        feed(vm, "session.start",
             json_pack("{s:s,s:s,s:s,s:s,s:I}", "session_id", "bench", "mode", "sandbox", "model",
                       "demo (scripted)", "workspace", "/tmp", "max_iterations", (json_int_t)100));
        feed(vm, "user.message", json_pack("{s:s}", "text", "a long session"));
        for (i = 0; i < 10000; i++) {
                snprintf(id, sizeof(id), "call_%d", i);
                feed(vm, "tool.call",
                     json_pack("{s:s,s:s,s:s}", "call_id", id, "name", "bash", "arguments",
                               "{\"command\": \"make -j2 test && echo all good\"}"));
                feed(vm, "tool.output",
                     json_pack("{s:s,s:s,s:s}", "call_id", id, "stream", "stdout", "data",
                               "line of output\n"));
                if (i < 10000 - 64)
                        feed(vm, "tool.result",
                             json_pack("{s:s,s:b,s:s,s:i,s:i}", "call_id", id, "ok", 1, "output",
                                       "line of output\n", "exit_code", 0, "duration_ms", 12));
        }
        for (i = 0; i < 64; i++) {
                int k;
                snprintf(id, sizeof(id), "call_%d", 10000 - 64 + i);
                feed(vm, "exec.create",
                     json_pack("{s:I,s:s,s:s,s:{s:I,s:I}}", "exec_id", (json_int_t)i + 1, "call_id",
                               id, "isolation", "sandbox", "limits", "memory_bytes",
                               (json_int_t)(512 << 20), "pids", (json_int_t)128));
                feed(vm, "exec.start",
                     json_pack("{s:I,s:i,s:I}", "exec_id", (json_int_t)i + 1, "pid", 1000 + i,
                               "setup_us", (json_int_t)700));
                for (k = 0; k < 150; k++)
                        feed(vm, "exec.stats",
                             json_pack("{s:I,s:f,s:I,s:I,s:I,s:i}", "exec_id", (json_int_t)i + 1,
                                       "cpu_pct", (double)((k * 7 + i) % 100), "cpu_ms",
                                       (json_int_t)k * 10, "mem_bytes", (json_int_t)(k + 1) << 20,
                                       "mem_peak_bytes", (json_int_t)(k + 1) << 20, "pids",
                                       k % 9 + 1));
        }
        ns = calloc((size_t)frames * 2, sizeof(*ns));
        if (ns == NULL)
                bench_die("out of memory");
        {
                struct tui_bench live = {160, 48, frames, false, NULL, NULL};
                struct tui_bench detail = {160, 48, frames, true, stream_chunk, "call_9999"};
                if (tui_bench_frames(vm, &live, ns) < 0 ||
                    tui_bench_frames(vm, &detail, ns + frames) < 0)
                        bench_die("cannot draw off-screen");
        }
        printf("### TUI frame: 10,000 tool calls and 64 live sandboxes, 160x48, %d frames "
               "(microseconds)\n\n",
               frames);
        printf("| | median | p90 |\n|---|---:|---:|\n");
        report("draw one frame of the live view", ns, frames);
        report("draw the detail view, 16 KiB more output each frame", ns + frames, frames);
        printf("\n- target: median under 2 ms: live view %s, detail view %s\n",
               ns[frames / 2] < 2000000 ? "PASS" : "MISS",
               ns[frames + frames / 2] < 2000000 ? "PASS" : "MISS");
        free(ns);
        viewmodel_free(vm);
        return 0;
}
