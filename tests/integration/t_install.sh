#!/bin/bash
# make install and uninstall into a DESTDIR: the files and their modes, the
# man page rendered and lint-clean, the installed binary finding its themes
# from the installed prefix (and a copied one saying where it looked), the
# bash and zsh completions, and the documentation naming every option.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

DEST=$WORK/root
P=$DEST/usr/local
# -o proctor: install the binary as built; nothing is compiled here. The
# flags of a make this runs under (make test) are not this make's.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP" --no-print-directory "$@"; }
out=$(mk -o proctor install DESTDIR="$DEST" PREFIX=/usr/local 2>&1)
rc=$?
expect_eq "make install succeeds" 0 $rc
expect_no_match "make install compiles nothing" '(^|[ /])(cc|gcc|clang) ' "$out"
# the binary under test, when it is not the checkout's ./proctor
[ "$PROCTOR" -ef "$TOP/proctor" ] || install -m 755 "$PROCTOR" "$P/bin/proctor"
give_away "$DEST"

mode_is() { [ "$(stat -c %a "$2")" = "$1" ] && [ -f "$2" ]; }
check "binary installed 0755" mode_is 755 "$P/bin/proctor"
check "man page installed 0644" mode_is 644 "$P/share/man/man1/proctor.1"
check "bash completion installed 0644" mode_is 644 "$P/share/bash-completion/completions/proctor"
check "zsh completion installed 0644" mode_is 644 "$P/share/zsh/site-functions/_proctor"
n=0
for f in "$TOP"/themes/*.theme; do
        n=$((n + 1))
        check "theme $(basename "$f") installed 0644" mode_is 644 "$P/share/proctor/themes/${f##*/}"
done
check "there are bundled themes to install" test "$n" -ge 2

# ---- the man page ----
MAN=$P/share/man/man1/proctor.1
lint=$(mandoc -Tlint -Wwarning "$MAN" 2>&1); rc=$?
expect_eq "mandoc -Tlint: no warnings" "0:" "$rc:$lint"
lint=$(groff -mandoc -ww -z "$MAN" 2>&1); rc=$?
expect_eq "groff -ww: no warnings" "0:" "$rc:$lint"
page=$(MANWIDTH=100 man -l "$MAN" 2>/dev/null)
for s in "proctor run" "proctor exec" "proctor replay" "proctor doctor" "^KEYS" "^ENVIRONMENT" \
        "^FILES" "^EXIT STATUS" "^EXAMPLES" "TOOL_EXECUTION_MODE" "PROCTOR_THEMES_DIR" \
        "Ctrl-L"; do
        expect_match "man -l renders: $s" "$s" "$page"
done

# every option the parser knows is in the man page, --help and the completions
opts=$(sed -n '/^static const struct opt opts\[\] = {/,/^};/s/^ *{"\([a-z-]*\)".*/\1/p' \
        "$TOP/core/session/options.c")
check "the option table is read" test "$(echo "$opts" | wc -w)" -ge 20
help=$("$P/bin/proctor" --help)
for o in $opts; do
        expect_match "man page has --$o" "(^|[^a-z-])--$o([^a-z-]|$)" "$page"
        expect_match "proctor --help lists --$o" "(^|[^a-z-])--$o([^a-z-]|$)" "$help"
        expect_match "bash completion knows --$o" "--$o([^a-z-]|$)" \
                "$(cat "$P/share/bash-completion/completions/proctor")"
        expect_match "zsh completion knows --$o" "[',]--$o(=|\\[|\\})" "$(cat "$P/share/zsh/site-functions/_proctor")"
done

# ---- themes, from the installed prefix ----
printf 'name = Installed Marker\n' >"$P/share/proctor/themes/zz-marker.theme"
chmod 644 "$P/share/proctor/themes/zz-marker.theme"
mkdir -p "$WORK/s" "$WORK/xdg"
echo '{"content": "quick answer"}' >"$WORK/s/quick.jsonl"
give_away "$WORK/s" "$WORK/xdg"
ENVS="env -u PROCTOR_THEMES_DIR XDG_CONFIG_HOME=$WORK/xdg"
start ins 120x40 "$ENVS $P/bin/proctor --approval never --model script:$WORK/s/quick.jsonl"
expect_screen ins "Where should this session's tools run" "the installed binary starts"
check "no complaint about themes" bash -c "! $T capture-pane -p -t ins | grep -q 'no bundled themes'"
$T send-keys -t ins "go" Enter
expect_screen ins "session completed" "a quick session to cycle themes in"
seen=""
for i in $(seq 10); do
        $T send-keys -t ins t
        sleep 0.2
        seen="$seen $(screen ins | grep -o 'theme: [A-Za-z -]*' | head -1)"
done
expect_match "t reaches the theme added to the installed dir" "theme: Installed Marker" "$seen"
expect_match "t cycles the installed bundled themes" "theme: Light" "$seen"
expect_no_match "no theme error while cycling" "no .*\.theme|not a valid theme" "$seen"
$T send-keys -t ins q
expect_screen ins "EXITED 0" "the installed binary quits"

# A copy elsewhere, with no themes near it: it says where it looked (when
# the build's compiled-in data directory has none either).
mkdir -p "$WORK/bare"
cp "$P/bin/proctor" "$WORK/bare/proctor"
give_away "$WORK/bare"
start bare 140x40 "$ENVS $WORK/bare/proctor"
expect_screen bare "Where should this session's tools run" "a copied binary starts"
if ! ls /usr/local/share/proctor/themes/default.theme >/dev/null 2>&1; then
        expect_screen bare "no bundled themes near $WORK/bare or in /usr/local/share/proctor/themes" \
                "a copied binary says where it looked for themes"
fi
$T send-keys -t bare q
# ...and with the themes of the install named, it has them
start named 120x40 "XDG_CONFIG_HOME=$WORK/xdg PROCTOR_THEMES_DIR=$P/share/proctor/themes \
        $WORK/bare/proctor --theme zz-marker"
expect_screen named "Where should this session's tools run" "a copied binary with PROCTOR_THEMES_DIR"
check "no complaint with PROCTOR_THEMES_DIR" \
        bash -c "! $T capture-pane -p -t named | grep -q 'no bundled themes\|zz-marker'"
$T send-keys -t named q

# ---- bash completion ----
# complete WORD...: COMPREPLY, one a line, for the command line WORD...
# (the last word is the one being completed), from the installed file
complete_bash() {
        bash --norc --noprofile -c '. "$1"; shift; COMP_WORDS=("$@")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _proctor; printf "%s\n" "${COMPREPLY[@]}"' \
                _ "$P/share/bash-completion/completions/proctor" "$@" | sort | tr '\n' ' '
}
expect_eq "bash: --mode values" "local sandbox " "$(complete_bash proctor --mode "")"
expect_eq "bash: --mode=s (split at =)" "sandbox " "$(complete_bash proctor --mode = s)"
expect_eq "bash: --workspace-mode values" "none overlay ro rw " \
        "$(complete_bash proctor run --workspace-mode "")"
expect_eq "bash: the commands" "attach doctor exec images ls mcp replay resume run " "$(complete_bash proctor "")"
expect_eq "bash: mcp's subcommand" "list " "$(complete_bash proctor mcp "")"
expect_eq "bash: run's options" "--max-iterations --max-parallel " "$(complete_bash proctor run --max-)"
expect_eq "bash: doctor's options" "--help --json " "$(complete_bash proctor doctor --)"
expect_match "bash: themes from the installed dir" "(^| )zz-marker " "$(complete_bash proctor --theme "")"
expect_match "bash: --workspace completes directories" "$WORK/bare" \
        "$(complete_bash proctor exec --workspace "$WORK/ba")"
expect_eq "bash: script: model files" "$WORK/s/quick.jsonl " \
        "$(complete_bash proctor --model script : "$WORK/s/qu")"
expect_match "bash: the command after exec --" "(^| )hostname " \
        "$(complete_bash proctor exec --mode local -- hostnam)"

# ---- zsh completion (in a pseudo-terminal: zsh completes interactively) ----
cat >"$WORK/zcomp.zsh" <<'EOF'
zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z "fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; PS1='%% '; LISTMAX=1000"
zpty -w -n z "$2"$'\t'
out=""
for i in {1..50}; do
        while zpty -r -t z chunk; do out+=$chunk; done
        [[ $out == *$3* ]] && break
        sleep 0.1
done
print -r -- "$out" | tr -d '\r'
zpty -d z
EOF
complete_zsh() { timeout 20 zsh -f "$WORK/zcomp.zsh" "$P/share/zsh/site-functions" "$1" "$2"; }
expect_match "zsh: --workspace-mode values" "none +overlay +ro +rw" \
        "$(complete_zsh "proctor --workspace-mode " overlay)"
expect_match "zsh: the commands" "replay +-- play a recorded session" \
        "$(complete_zsh "proctor r" replay)"
expect_match "zsh: --mode values" "local +sandbox" "$(complete_zsh "proctor exec --mode " sandbox)"

# ---- uninstall ----
out=$(mk uninstall DESTDIR="$DEST" PREFIX=/usr/local 2>&1)
expect_eq "make uninstall succeeds" 0 $?
for f in bin/proctor share/man/man1/proctor.1 share/bash-completion/completions/proctor \
        share/zsh/site-functions/_proctor share/proctor/themes/default.theme; do
        check "uninstall removes $f" test ! -e "$P/$f"
done
check "a theme added by hand stays" test -f "$P/share/proctor/themes/zz-marker.theme"
rm "$P/share/proctor/themes/zz-marker.theme"
mk uninstall DESTDIR="$DEST" PREFIX=/usr/local >/dev/null 2>&1
check "uninstall removes the emptied data directory" test ! -e "$P/share/proctor"
finish
