#!/bin/bash
# The include arrows only point down. From the bottom up:
#   exec/ (the seam: exec.h, runtime.h; its backends native/, image/, docker/)
#   core/util  core/model  core/view  core/tools  core/session  core/cli
#   tui/  main.c
# A file may include its own layer and those below it, never one above:
# exec nothing of core or tui, core nothing of tui, core/view nothing of
# core/session... Prints each arrow that runs back up; fails if there is one.
cd "$(dirname "$0")/.." || exit 2

rank() { # PATH -> the layer's rank, or nothing for a file outside the layers
        case $1 in
        exec/*) echo 0 ;;
        core/util/*) echo 1 ;;
        core/model/*) echo 2 ;;
        core/view/*) echo 3 ;;
        core/tools/*) echo 4 ;;
        core/session/*) echo 5 ;;
        core/cli/*) echo 6 ;;
        tui/*) echo 7 ;;
        main.c) echo 8 ;;
        esac
}

bad=0 files=0
for f in main.c exec/*.[ch] exec/*/*.[ch] core/*/*.[ch] tui/*.[ch]; do
        [ -f "$f" ] || continue
        r=$(rank "$f")
        if [ -z "$r" ]; then
                echo "check-layers: $f is in no layer (put it in one of the folders above)"
                bad=1
                continue
        fi
        files=$((files + 1))
        while IFS= read -r inc; do
                ir=$(rank "$inc")
                [ -n "$ir" ] || continue
                if [ "$ir" -gt "$r" ]; then
                        echo "check-layers: $f includes $inc, a layer above its own"
                        bad=1
                fi
        done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
[ "$bad" -eq 0 ] && echo "check-layers: ok ($files files, every include points down)"
exit "$bad"
