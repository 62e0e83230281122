#!/bin/bash
# The supervisor tells the operator what the boundary really is: where the
# session's mode came from (a flag, the environment, a config file, the
# setup screen), and when sandbox limits hold per process only because no
# cgroup enforces them (an unprivileged user without delegation).
# as-user: yes
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/cfg/proctor"
echo '{"tool_execution_mode": "sandbox"}' > "$WORK/cfg/proctor/config.json"

start a 120x40 "'$PROCTOR' --mode sandbox"
expect_screen a "Where should this session's tools run" "setup screen shown"
expect_screen a "mode from  --mode" "the setup screen names --mode as the source"
if is_root; then
        expect_no_match "with cgroups: no per-process badge" "LIMITS PER PROCESS|no cgroup here" "$(screen a)"
else
        expect_screen a "LIMITS PER PROCESS" "without cgroups: the header says limits are per process"
        expect_screen a "no cgroup here: limits per process only" \
                "without cgroups: the sandbox choice says which limits fell back"
fi
$T send-keys -t a F2
expect_screen a "mode from  the setup screen \(F2\)" "a flip names the setup screen"
expect_no_match "local: no per-process badge" "LIMITS PER PROCESS" "$(screen a | head -n 1)"
$T send-keys -t a F10
expect_screen a "EXITED 0" "quit from setup"

start b 120x40 "XDG_CONFIG_HOME='$WORK/cfg' '$PROCTOR'"
expect_screen b "mode from  config file $WORK/cfg/proctor/config.json" \
        "the setup screen names the config file that chose the mode"
expect_screen b "\[x\] sandbox" "the config file's mode is selected"
$T send-keys -t b F10
expect_screen b "EXITED 0" "quit from setup"

start c 120x40 "TOOL_EXECUTION_MODE=sandbox '$PROCTOR'"
expect_screen c "mode from  TOOL_EXECUTION_MODE" "the setup screen names the environment"
$T send-keys -t c F10

# a workspace sandboxes cannot write: said on the sandbox card before the
# start, and sandbox mode does not start
mkdir "$WORK/readonly"
give_away "$WORK/readonly"
chmod 555 "$WORK/readonly"
start d 160x40 "'$PROCTOR' --mode sandbox --model demo --workspace '$WORK/readonly'"
expect_screen d "the workspace cannot be used: see below" "the sandbox card says the workspace cannot be used"
expect_screen d "readonly \\($T_OWNER's, mode 0555\\)" \
        "the setup screen names the directory and its owner"
expect_screen d "whom sandboxes act as there" "the setup screen says why, whole"
$T send-keys -t d "hello" Enter
expect_screen d "cannot start: workspace " "sandbox mode does not start on it"
expect_screen d "Where should this session's tools run" "the setup screen stays"
$T send-keys -t d F10
expect_screen d "EXITED 0" "quit from setup"
chmod 755 "$WORK/readonly"

# MCP servers that fail in a sandbox: each one's whole reason, and for a
# network failure of a server without network, the likely fix
cat >"$WORK/failing.json" <<'JSON'
{"mcpServers": {
  "fetcher": {"command": "sh", "args": ["-c", "echo 'npm ERR! getaddrinfo ENOTFOUND registry.npmjs.org' >&2; exit 1"]},
  "second": {"command": "sh", "args": ["-c", "echo broken-second-server >&2; exit 3"]}}}
JSON
start f 140x40 "'$PROCTOR' --mode sandbox --model demo --mcp-config '$WORK/failing.json'"
expect_screen f "fetcher: exited with code 1; its stderr ended: npm ERR! getaddrinfo ENOTFOUND" \
        "a failed server's reason is shown whole, not cut in the mcp line" 20
expect_screen f "\"network\": true in its" "a network failure without network suggests \"network\": true"
expect_screen f "second: exited with code 3; its stderr ended: broken-second-server" \
        "a second failed server is shown too" 20
$T send-keys -t f F2
expect_screen f "mode from  the setup screen" "flipped to local"
wait_for f "fetcher: exited" 20 >/dev/null
check "in local mode the network hint is not given" sh -c "! $T capture-pane -p -t f | grep -q 'no network in its sandbox'"
$T send-keys -t f F10
expect_screen f "EXITED 0" "quit from setup"
finish
