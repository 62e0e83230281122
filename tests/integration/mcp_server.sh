# Sourced by the MCP tests after lib.sh: installs @modelcontextprotocol/server-everything
# (at MCP_VERSION when set, else the latest) with npm once (cached in
# build/mcp-everything[-VERSION]), copies it into the scratch workspace (a
# sandbox sees only /workspace) and writes $WORK/mcp.json for it. Exits the
# test with SKIP, saying why, only when npm cannot install it.
PKG=@modelcontextprotocol/server-everything
CACHE=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}/build/mcp-everything${MCP_VERSION:+-$MCP_VERSION}
# (one install at a time: runs of the suite go in parallel)
mkdir -p "$(dirname "$CACHE")"
exec {mcp_lock}>"$CACHE.lock"
flock "$mcp_lock"
if [ ! -f "$CACHE/node_modules/$PKG/package.json" ]; then
        rm -rf "$CACHE.tmp"
        mkdir -p "$CACHE.tmp"
        if ! command -v npm >/dev/null ||
                ! npm install --silent --no-audit --no-fund --prefix "$CACHE.tmp" "$PKG${MCP_VERSION:+@$MCP_VERSION}" \
                        >"$WORK/npm.log" 2>&1; then
                echo "SKIP: $(basename "$0"): npm cannot install $PKG here: $(tail -n 3 "$WORK/npm.log" 2>/dev/null)"
                exit 0
        fi
        rm -rf "$CACHE" && mv "$CACHE.tmp" "$CACHE"
fi
exec {mcp_lock}>&-
cp -r "$CACHE/node_modules" "$WORK/"
give_away "$WORK/node_modules"
cat >"$WORK/mcp.json" <<JSON
{"mcpServers": {"everything": {"command": "node", "args": ["node_modules/$PKG/dist/index.js", "stdio"]}}}
JSON
# Tool names changed between versions of the server: mcp_tool NAME OLDNAME
# prints the one this version has.
MCP_TOOLS=$(cd "$WORK" && "$PROCTOR" mcp list --mcp-config mcp.json --json)
mcp_tool() {
        printf '%s' "$MCP_TOOLS" | python3 -c 'import json,sys
names = {t["name"] for s in json.load(sys.stdin) for t in s["tools"]}
print(sys.argv[1] if sys.argv[1] in names else sys.argv[2])' "$1" "$2"
}
