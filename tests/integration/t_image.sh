#!/bin/bash
# --image: sandboxes rooted in an image built here without any engine (a
# `docker save` tarball and an OCI layout of busybox layers): the image's
# files, not the host's; whiteouts and opaque directories applied; hostile
# layers refused (path escapes) or neutralized (devices, setuid), checked
# from outside (nothing written beyond the cache) and from inside.
# as-user: yes
. "$(dirname "$0")/lib.sh"

MK="$TOP/tests/integration/image_make.py"
export XDG_CACHE_HOME="$WORK/cache"
CACHE="$XDG_CACHE_HOME/proctor/images"
IMG="$WORK/img"
ESC="$WORK/escape-target"
mkdir -p "$IMG" "$ESC"
give_away "$ESC"
python3 "$MK" base "$IMG/base.tar"
python3 "$MK" base "$IMG/oci" --oci
python3 "$MK" hostile "$IMG/hostile.tar"
python3 "$MK" base "$IMG/old.tar" --links
for k in dotdot absolute linkout through hardout; do
        ESCAPE_DIR="$ESC" python3 "$MK" "$k" "$IMG/$k.tar"
done
img() { sandbox --image "$@"; }

# ---- the image's root, not the host's ----
out=$(img "$IMG/base.tar" -- sh -c 'cat /bin/image-marker; cat /etc/os-release; test -e /usr/bin/python3 && echo host-python; cat /etc/debian_version 2>&1; ls /usr' 2>/dev/null)
expect_match "the image's own file" "^from the image" "$out"
expect_match "the image's /etc/os-release" "ID=proctor-test-image" "$out"
expect_no_match "no host /usr in the image root" "host-python" "$out"
expect_match "no host /etc/debian_version" "No such file" "$out"
out=$(img "$IMG/base.tar" -- sh -c 'id -u; stat -f -c %T /; echo $PATH; echo $IMAGE_VAR; echo $HOME; pwd' 2>/dev/null)
expect_eq "sandbox uid, tmpfs root, image PATH and Env, own HOME, /workspace" "1000
tmpfs
/bin:/image-path
from-image
/tmp
/workspace" "$out"
out=$(img "$IMG/base.tar" -- sh -c 'touch /bin/x 2>&1; touch /opq/x 2>&1; echo ok > /tmp/t && cat /tmp/t; ls /workspace >/dev/null && echo ws' 2>/dev/null)
expect_eq "image read-only, /tmp and /workspace as today" "touch: /bin/x: Read-only file system
touch: /opq/x: Read-only file system
ok
ws" "$out"

# The default cache sits in a home only its owner may enter (root's is
# 0700), which the sandbox's user may not: the image is still reached.
mkdir -m 700 "$WORK/home"
out=$(HOME="$WORK/home" XDG_CACHE_HOME= sandbox --image "$IMG/base.tar" -- cat /bin/image-marker 2>/dev/null)
expect_eq "default cache in a 0700 home" "from the image" "$out"
check "the default cache is under HOME" test -d "$WORK/home/.cache/proctor/images/roots"

# ---- whiteouts and opaque directories from the upper (gzip) layer ----
out=$(img "$IMG/base.tar" -- sh -c 'ls /bin/gone 2>&1; ls /opq; cat /etc/profile; ls -i /opq/new /opq/samefile | cut -d" " -f1 | uniq | wc -l' 2>/dev/null)
expect_eq "whiteout, opaque dir, replaced file, hard link" "ls: /bin/gone: No such file or directory
new
samefile
# upper
1" "$out"

# ---- the OCI layout gives the same root and digest ----
expect_eq "OCI layout: same files" "from the image" "$(img "$IMG/oci" -- cat /bin/image-marker 2>/dev/null)"
expect_eq "old docker save layout, a layer through a link member" "from the image" "$(XDG_CACHE_HOME="$WORK/cache2" img "$IMG/old.tar" -- cat /bin/image-marker 2>/dev/null)"
out=$("$PROCTOR" images)
expect_match "images lists the tarball" "base.tar +sha256:[0-9a-f]{12} +[0-9.]+M " "$out"
expect_eq "the OCI layout shares its root (same config digest)" 1 "$(ls "$CACHE/roots" | wc -l)"

# ---- what is shown but not applied ----
err=$(img "$IMG/base.tar" -- true 2>&1 >/dev/null)
expect_match "User shown, not applied" "image User '1000:1000' is not applied" "$err"
expect_match "WorkingDir shown, not applied" "WorkingDir '/srv/app' is not applied" "$err"
out=$(img "$IMG/base.tar" --json -- true 2>/dev/null | json_field exec.create image)
expect_eq "exec.create carries the image" "$IMG/base.tar" "$out"
PROCTOR_IMAGE="$IMG/base.tar" "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- cat /bin/image-marker >"$WORK/o" 2>/dev/null
expect_eq "PROCTOR_IMAGE sets it" "from the image" "$(cat "$WORK/o")"
"$PROCTOR" exec --mode local --image "$IMG/base.tar" -- true 2>"$WORK/e"
expect_eq "--image with local mode: usage error" 2 $?
expect_match "says it needs sandbox mode" "needs --mode sandbox" "$(cat "$WORK/e")"
DOCKER_HOST="unix://$WORK/no-engine.sock" "$PROCTOR" exec --mode sandbox --image alpine:latest -- true 2>"$WORK/e"
expect_eq "an engine name, no engine: usage error" 2 $?
expect_match "names docker save as the other way" "docker save alpine:latest -o FILE" "$(cat "$WORK/e")"

# ---- a first unpack shows its progress on a terminal, and only there ----
if command -v script >/dev/null; then
        out=$(XDG_CACHE_HOME="$WORK/cache-tty" script -qec \
                "'$PROCTOR' exec --mode sandbox --workspace '$WORK' --image '$IMG/base.tar' -- cat /bin/image-marker" \
                /dev/null | tr '\r' '\n')
        expect_match "a terminal: the unpack's progress, layer by layer" \
                "proctor exec: unpacking layer 1 of [0-9]+: [0-9.]+[BKMG] of [0-9.]+[BKMG]" "$out"
        expect_match "a terminal: then the command's output" "from the image" "$out"
else
        echo "t_image: no script(1): the progress line on a terminal is not tested"
fi
out=$(XDG_CACHE_HOME="$WORK/cache-notty" "$PROCTOR" exec --mode sandbox --workspace "$WORK" \
        --image "$IMG/base.tar" -- true 2>&1)
expect_no_match "not a terminal: no progress line" "unpacking layer" "$out"

# ---- an image from the engine's store (a stand-in engine on a socket) ----
python3 "$TOP/tests/integration/engine_fake.py" "$WORK/engine.sock" "test/base:1=$IMG/base.tar" >"$WORK/engine.log" 2>&1 &
engine=$!
for _ in $(seq 50); do [ -S "$WORK/engine.sock" ] && break; sleep 0.1; done
export DOCKER_HOST="unix://$WORK/engine.sock"
# (a cache of its own: the file it comes from is cached already above)
out=$(XDG_CACHE_HOME="$WORK/cache-engine" img test/base:1 -- cat /bin/image-marker 2>"$WORK/e") ||
        cat "$WORK/e" "$WORK/engine.log"
expect_eq "an engine's image by name" "from the image" "$out"
expect_eq "first its id, then the export (GET /images/NAME/get)" \
        "GET /images/test/base:1/json HTTP/1.0,GET /images/test/base:1/get HTTP/1.0" \
        "$(paste -sd, "$WORK/engine.log")"
# once cached, the name is resolved (GET /images/NAME/json) and nothing exported again
seen=$(wc -l <"$WORK/engine.log")
out=$(XDG_CACHE_HOME="$WORK/cache-engine" img test/base:1 -- cat /bin/image-marker 2>"$WORK/e") ||
        cat "$WORK/e" "$WORK/engine.log"
expect_eq "cached: the engine's image by name again" "from the image" "$out"
expect_eq "cached: only its id is asked for" "GET /images/test/base:1/json HTTP/1.0" \
        "$(tail -n +$((seen + 1)) "$WORK/engine.log")"
img not/there:1 -- true 2>"$WORK/e"
expect_eq "not in the store: usage error" 2 $?
expect_match "says docker pull" "not in the engine's store.*docker pull not/there:1" "$(cat "$WORK/e")"
img 'bad name;x' -- true 2>"$WORK/e"
expect_eq "a name that needs escaping is refused" 2 $?
DOCKER_HOST=tcp://127.0.0.1:1 "$PROCTOR" exec --mode sandbox --workspace "$WORK" --image test/base:1 -- true 2>"$WORK/e"
expect_match "a TCP engine: said, not tried" "only an engine on a unix socket" "$(cat "$WORK/e")"
kill "$engine"
wait "$engine" 2>/dev/null
unset DOCKER_HOST

# The supervisor: the setup screen names the image, its sandboxes are in it
. "$(dirname "$0")/tmux.sh"
cat >"$WORK/sv.jsonl" <<'S'
{"content": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "cat /bin/image-marker"}}]}
{"content": "Seen the image."}
S
start sv 160x40 "XDG_CACHE_HOME=$XDG_CACHE_HOME $PROCTOR --mode sandbox --image $IMG/base.tar --model script:$WORK/sv.jsonl"
expect_screen sv "image      $IMG/base.tar \([0-9a-f]{12}\)" "the setup screen names the image and its digest"
expect_screen sv "SANDBOX \\(isolated\\) .*IMAGE base.tar" "the header badge names the image"
$T send-keys -t sv F2
expect_screen sv "image      $IMG/base.tar: not used in local mode \\(tools run on this host\\)" \
        "flipped to local, the setup screen says the image is not used"
$T send-keys -t sv F2
expect_screen sv "image      $IMG/base.tar \([0-9a-f]{12}\)" "flipped back, the image is named again"
$T send-keys -t sv go Enter
expect_screen sv "Seen the image" "the supervisor's session runs" 10
$T send-keys -t sv Tab Enter
expect_screen sv "from the image" "its sandbox ran in the image's root"
$T send-keys -t sv Escape
sleep 0.2
# the execution's detail names the image its root comes from
$T send-keys -t sv Tab
sleep 0.2
$T send-keys -t sv Enter
expect_screen sv "image +$IMG/base.tar \(its root filesystem\)" "the execution's detail names its image"
$T send-keys -t sv Escape
sleep 0.2
$T send-keys -t sv q
expect_screen sv "EXITED 0" "quit the supervisor"
# a pane wide enough shows the image on the execution's row itself
start sw 260x30 "XDG_CACHE_HOME=$XDG_CACHE_HOME $PROCTOR --mode sandbox --image $IMG/base.tar --model script:$WORK/sv.jsonl"
expect_screen sw "Where should this session's tools run" "the wide supervisor's setup"
$T send-keys -t sw go Enter
expect_screen sw "#1 exited .*exit 0  image base.tar" "the execution's row names its image" 10
$T send-keys -t sw q

# ---- the supervisor: a first export and unpack run before the setup
# screen, showing how far they are, and Esc or Ctrl-C cancels them ----
# an engine that sends the start of the export, then nothing
ENGINE_FAKE_STALL=70000 python3 "$TOP/tests/integration/engine_fake.py" "$WORK/slow.sock" \
        "test/slow:1=$IMG/base.tar" >"$WORK/slow.log" 2>&1 &
slow=$!
python3 "$TOP/tests/integration/engine_fake.py" "$WORK/fast.sock" "test/fast:1=$IMG/base.tar" \
        >"$WORK/fast.log" 2>&1 &
fast=$!
for _ in $(seq 50); do [ -S "$WORK/slow.sock" ] && [ -S "$WORK/fast.sock" ] && break; sleep 0.1; done
for key in Escape C-c; do
        start "p$key" 120x30 "DOCKER_HOST=unix://$WORK/slow.sock XDG_CACHE_HOME=$WORK/cache-slow $PROCTOR --mode sandbox --image test/slow:1 --model script:$WORK/sv.jsonl"
        expect_screen "p$key" "exporting from the engine: 6[0-9.]+K" \
                "a stuck export: the supervisor shows the bytes come so far"
        expect_screen "p$key" "Esc, q or Ctrl-C cancel" "and how to cancel it"
        $T send-keys -t "p$key" "$key"
        expect_screen "p$key" "proctor: image test/slow:1: cancelled; nothing of the unpack was kept" \
                "$key cancels the stuck export, and says so"
        expect_screen "p$key" "EXITED 130" "$key: the supervisor leaves as interrupted"
done
check "a cancelled export leaves nothing in the cache" \
        test -z "$(ls -A "$WORK/cache-slow/proctor/images/roots" 2>/dev/null)"
wait_file() { for _ in $(seq 50); do grep -q "$2" "$1" && return 0; sleep 0.1; done; return 1; }
check "the engine sees the export abandoned" wait_file "$WORK/slow.log" "export abandoned"
start pf 120x30 "DOCKER_HOST=unix://$WORK/fast.sock XDG_CACHE_HOME=$WORK/cache-fast $PROCTOR --mode sandbox --image test/fast:1 --model script:$WORK/sv.jsonl"
expect_screen pf "image      test/fast:1 \([0-9a-f]{12}\)" "a whole export: the setup screen follows"
$T send-keys -t pf go Enter
expect_screen pf "Seen the image" "and the session runs in the image" 10
$T send-keys -t pf q
expect_screen pf "EXITED 0" "quit after the exported image's session"
# exec: Ctrl-C (SIGINT) ends a stuck export as well
gets=$(grep -c "/get " "$WORK/slow.log")
DOCKER_HOST="unix://$WORK/slow.sock" XDG_CACHE_HOME="$WORK/cache-slow" "$PROCTOR" exec \
        --mode sandbox --workspace "$WORK" --image test/slow:1 -- true 2>"$WORK/e" &
ex=$!
for _ in $(seq 100); do [ "$(grep -c "/get " "$WORK/slow.log")" -gt "$gets" ] && break; sleep 0.1; done
sleep 0.3 # inside the export, past its first bytes
kill -INT "$ex"
wait "$ex"
expect_eq "exec: SIGINT ends a stuck export (exit 130)" 130 $?
expect_match "exec: and says nothing was kept" "cancelled; nothing of the unpack was kept" "$(cat "$WORK/e")"
kill "$slow" "$fast"
wait "$slow" "$fast" 2>/dev/null

# ---- a session: run's bash tool in the image ----
cat >"$WORK/s.jsonl" <<'S'
{"content": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "cat /bin/image-marker; echo $IMAGE_VAR"}}]}
{"content": "Done."}
S
"$PROCTOR" run --mode sandbox --workspace "$WORK" --image "$IMG/base.tar" --model "script:$WORK/s.jsonl" --json go >"$WORK/ev" 2>/dev/null
out=$(json_field tool.result output <"$WORK/ev")
expect_match "run: the bash tool sees the image's files" "from the image" "$out"
expect_match "run: and the image's Env" "from-image" "$out"
expect_match "session.start shows the image" '"user": "1000:1000"' "$(json_field session.start image <"$WORK/ev")"

# ---- the file tools in the image: proctor's libraries come with it, read-only ----
cat >"$WORK/f.jsonl" <<'S'
{"content": "Writing.", "tool_calls": [{"name": "write", "arguments": {"path": "ft.txt", "content": "from a file tool\n"}}]}
{"content": "Editing.", "tool_calls": [{"name": "edit", "arguments": {"path": "ft.txt", "old_str": "a file", "new_str": "the edit"}}]}
{"content": "Reading.", "tool_calls": [{"name": "read", "arguments": {"path": "ft.txt"}}]}
{"content": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls /usr/lib 2>&1; echo x > /.proctor/lib/0/x 2>&1; cat /.proctor/lib/*/libc.so.6 >/dev/null && echo libc-there"}}]}
{"content": "Done."}
S
"$PROCTOR" run --mode sandbox --workspace "$WORK" --image "$IMG/base.tar" --model "script:$WORK/f.jsonl" --json go >"$WORK/ev" 2>/dev/null
expect_eq "file tools in the image: all succeed" '[true, true, true, true]' "$(json_eval '[r["ok"] for r in of("tool.result")]' <"$WORK/ev")"
expect_eq "file tools in the image: the edited file" "from the edit tool" "$(cat "$WORK/ft.txt")"
expect_match "file tools in the image: read shows it" "from the edit tool" "$(json_eval '[r["output"] for r in of("tool.result")][2]' <"$WORK/ev")"
out=$(json_eval '[r["output"] for r in of("tool.result")][3]' <"$WORK/ev")
expect_match "file tools in the image: still no host /usr/lib" "No such file" "$out"
expect_match "file tools in the image: proctor's libraries read-only" "lib/0/x: Read-only file system" "$out"
expect_match "file tools in the image: proctor's libc there" "libc-there" "$out"

# ---- a hostile layer: devices, fifos, setuid/setgid neutralized ----
err=$(img "$IMG/hostile.tar" -- true 2>&1 >/dev/null)
expect_match "devices left out, said" "3 device nodes or fifos left out" "$err"
expect_match "setuid bits dropped, said" "setuid/setgid bits dropped from 2 files" "$err"
out=$(img "$IMG/hostile.tar" -- sh -c 'ls /bin/evil-chr /bin/evil-blk /bin/evil-fifo 2>&1 | wc -l; stat -c %a /bin/suid /bin/sgid /bin/sticky; find / -xdev -perm -4000 2>/dev/null | wc -l' 2>/dev/null)
expect_eq "no device node, no setuid inside" "3
755
755
777
0" "$out"
expect_eq "no setuid, device or fifo in the cache" "" "$(find "$CACHE" \( -perm /6000 -o -type c -o -type b -o -type p \) -print)"

# ---- path escapes: the layer is refused and nothing lands outside ----
for k in dotdot absolute linkout through hardout; do
        img "$IMG/$k.tar" -- true >/dev/null 2>"$WORK/e"
        expect_eq "$k: refused (125)" 125 $?
        expect_match "$k: says why" "layer refused: entry" "$(cat "$WORK/e")"
done
expect_eq "nothing written through the outside link" "" "$(ls -A "$ESC")"
check "no absolute-path file" test ! -e /tmp/proctor-escape-absolute
expect_eq "no escape file anywhere under the cache" "" "$(find "$XDG_CACHE_HOME" -name 'escape-*')"
expect_eq "no half layer or root left" "" "$(find "$CACHE" -maxdepth 2 -name '.tmp-*')"

# ---- an image's links resolve inside the image, never on the host ----
# usr and srv link to a host directory holding a marker, etc to one holding
# a 0600 file named like an allowlisted /etc file (root's, when run as root)
# and a directory named like an allowlisted one.
HU="$WORK/host-usr"
HE="$WORK/host-etc"
mkdir -p "$HU" "$HE/python3"
secret=$(new_marker host-secret)
echo "$secret-usr" >"$HU/usr-marker"
echo "$secret-etc" >"$HE/nsswitch.conf"
chmod 600 "$HE/nsswitch.conf"
echo "$secret-py" >"$HE/python3/secret"
LINK_USR="$HU" LINK_ETC="$HE" python3 "$MK" hostlinks "$IMG/hostlinks.tar"
python3 "$MK" innerlinks "$IMG/innerlinks.tar"
# the control: on the host those links lead to the secrets
expect_eq "control: the host's directory holds the marker" "$secret-usr" "$(cat "$HU/usr-marker")"
expect_eq "control: the 0600 file is there, readable by this user" "$secret-etc" "$(cat "$HE/nsswitch.conf")"
out=$(img "$IMG/hostlinks.tar" -- sh -c 'cat /usr/usr-marker /etc/nsswitch.conf /etc/python3/secret /srv/usr-marker; ls /usr /etc; cat /bin/image-marker' 2>&1)
expect_no_match "usr -> host dir: the host's files never reach the sandbox" "$secret" "$out"
expect_match "the image itself still works" "from the image" "$out"
# the control inside: links that stay in the image lead where they say
out=$(img "$IMG/innerlinks.tar" -- sh -c 'cat /usr/inside-marker /etc/os-release' 2>&1)
expect_match "usr -> /opt/usr: the image's own /opt/usr" "usr from inside the image" "$out"
expect_match "etc -> /opt/../opt/etc: the image's own /etc files" "ID=inner-links" "$out"

# ---- every digest is verified: a forged image cannot poison the cache ----
# forged: base's config and diff_ids over other content; forgedcfg: other
# layers under base's config digest. Each is refused, naming what lies, and
# the legitimate image later gets its own files.
python3 "$MK" forged "$IMG/forged.tar"
python3 "$MK" forgedcfg "$IMG/forgedcfg.tar"
for k in forged forgedcfg; do
        "$PROCTOR" images prune >/dev/null
        img "$IMG/$k.tar" -- cat /bin/image-marker >"$WORK/o" 2>"$WORK/e"
        check "$k: refused" test $? -ne 0
        expect_no_match "$k: its files never ran" "forged content" "$(cat "$WORK/o")"
        expect_match "$k: says what does not match" "does not match its (diff_id|digest).*damaged or forged" "$(cat "$WORK/e")"
        [ "$k" = forged ] && expect_match "forged: the layer is named" "layer 1 of 2 \(blobs/sha256/[0-9a-f]{64}\) does not match its diff_id" "$(cat "$WORK/e")"
        expect_eq "$k: nothing of it cached" "" "$(find "$CACHE" -mindepth 2)"
        expect_eq "$k: then the legitimate image gets its own files" "from the image" "$(img "$IMG/base.tar" -- cat /bin/image-marker 2>/dev/null)"
done
# forged's config is base's own (only its layer lied): once base is cached,
# it names base's verified root and gets base's files
expect_eq "forged, after base: base's verified files" "from the image" "$(img "$IMG/forged.tar" -- cat /bin/image-marker 2>/dev/null)"

# ---- size caps: an image's unpacked size, the whole cache ----
python3 "$MK" bomb "$IMG/bomb.tar"
check "the bomb is small on disk" test "$(stat -c %s "$IMG/bomb.tar")" -lt $((4 << 20))
"$PROCTOR" images prune >/dev/null
PROCTOR_IMAGE_MAX=8M img "$IMG/bomb.tar" -- true 2>"$WORK/e"
check "past PROCTOR_IMAGE_MAX: refused" test $? -ne 0
expect_match "names the cap and how to raise it" "more than --image-max 8M allows.*--image-max SIZE \(or PROCTOR_IMAGE_MAX, or image_max" "$(cat "$WORK/e")"
expect_eq "past the cap: nothing left in the cache" "" "$(find "$CACHE" -mindepth 2)"
img "$IMG/bomb.tar" --image-max 8M -- true 2>"$WORK/e"
expect_match "--image-max says the same" "more than --image-max 8M" "$(cat "$WORK/e")"
expect_eq "with room it unpacks" "from the image" "$(img "$IMG/bomb.tar" --image-max 64M -- cat /bin/image-marker 2>/dev/null)"
# the cache's cap: room for one image of these, the least recently used goes
"$PROCTOR" images prune >/dev/null
img "$IMG/base.tar" -- true 2>/dev/null
bytes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$CACHE"/roots/*/image.json)
echo "{\"image_cache_max\": $((bytes * 3 / 2))}" >"$WORK/cap.json"
img "$IMG/hostile.tar" --config "$WORK/cap.json" -- true 2>/dev/null
out=$("$PROCTOR" images)
expect_match "past image_cache_max: the newest stays" "hostile.tar" "$out"
expect_no_match "past image_cache_max: the least recently used went" "base.tar" "$out"
expect_eq "and it runs again from the layers kept" "from the image" "$(img "$IMG/base.tar" --config "$WORK/cap.json" -- cat /bin/image-marker 2>/dev/null)"
expect_no_match "now the other went" "hostile.tar" "$("$PROCTOR" images)"

# ---- names from an image never bring an escape sequence to the terminal ----
python3 "$MK" esc "$IMG/esc.tar"
python3 "$MK" escname "$IMG/escname.tar"
E=$(printf '\033')
# a tarball not cached yet, so that its name is the one `proctor images` lists
cp "$IMG/hostile.tar" "$IMG/tar${E}]0;owned$(printf '\007')name.tar"
img "$IMG/esc.tar" -- true >/dev/null 2>"$WORK/e1"
img "$IMG/escname.tar" -- true >/dev/null 2>"$WORK/e2"
img "$IMG/tar${E}]0;owned$(printf '\007')name.tar" -- true >/dev/null 2>"$WORK/e3"
"$PROCTOR" images >"$WORK/e4" 2>&1
"$PROCTOR" exec --mode sandbox --workspace "$WORK/no${E}[2Jdir" -- true >/dev/null 2>"$WORK/e5"
"$PROCTOR" run --mode sandbox --workspace "$WORK" --image "$IMG/escname.tar" --model "script:$WORK/s.jsonl" go >/dev/null 2>"$WORK/e6"
# (the supervisor unpacks on its screen, then says why it cannot go on)
start e7 100x30 "$PROCTOR --mode sandbox --workspace $WORK --image $IMG/escname.tar 2>$WORK/e7"
wait_for e7 "EXITED 2" || fail "the supervisor: a refused image ends it (exit 2)"
# the control: each message does quote the name, shown in caret notation
expect_match "User shown" "image User '\^\[\[31mevil'" "$(cat "$WORK/e1")"
expect_match "WorkingDir shown" "WorkingDir '/srv/\^\[\]0;owned\^Gapp'" "$(cat "$WORK/e1")"
expect_match "the refused entry named" "entry 'bin/\.\./\.\./\^\[\[2J" "$(cat "$WORK/e2")"
expect_match "the tarball's name in a note" "image .*/tar\^\[\]0;owned\^Gname.tar: 3 device nodes" "$(cat "$WORK/e3")"
expect_match "images lists the tarball's name" "tar\^\[\]0;owned\^Gname.tar" "$(cat "$WORK/e4")"
expect_match "the workspace named" "no\^\[\[2Jdir" "$(cat "$WORK/e5")"
expect_match "run: the refused entry named" "entry 'bin/\.\./\.\./\^\[\[2J" "$(cat "$WORK/e6")"
expect_match "the supervisor: the refused entry named" "entry 'bin/\.\./\.\./\^\[\[2J" "$(cat "$WORK/e7")"
for i in 1 2 3 4 5 6 7; do
        check "message $i: no ESC byte" test "$(grep -c "$E" "$WORK/e$i")" -eq 0
done

# ---- a cache an older proctor filled (digests never checked) is not trusted ----
"$PROCTOR" images prune >/dev/null
img "$IMG/base.tar" -- true 2>/dev/null
check "the cache records its format" test -f "$CACHE/format"
layer=$(dirname "$(dirname "$(ls "$CACHE"/layers/*/bin/image-marker)")")
chmod u+w "$layer/bin/image-marker"
echo poisoned >"$layer/bin/image-marker"
rm -rf "$CACHE/roots" "$CACHE/format"
expect_eq "an older cache's layers are unpacked again" "from the image" "$(img "$IMG/base.tar" -- cat /bin/image-marker 2>/dev/null)"

# ---- an interrupted unpack is never trusted ----
"$PROCTOR" images prune >/dev/null
mkdir -p "$CACHE/roots/.tmp-stale/rootfs" "$CACHE/layers/.tmp-stale"
expect_eq "a half root is not listed" "" "$("$PROCTOR" images | grep -c stale | grep -v 0)"
expect_eq "a fresh unpack after it works" "from the image" "$(img "$IMG/base.tar" -- cat /bin/image-marker 2>/dev/null)"
out=$("$PROCTOR" images prune)
expect_match "prune removes the image" "removed 1 image" "$out"
expect_eq "prune leaves no layers or leftovers" "" "$(find "$CACHE" -mindepth 2)"
expect_match "the list is empty after prune" "no images" "$("$PROCTOR" images)"

finish
