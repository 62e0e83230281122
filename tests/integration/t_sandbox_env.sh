#!/bin/bash
# Environment: a sandbox starts from an allowlist (no host variable, let
# alone a secret, crosses); local mode keeps the host environment minus
# secrets. No secret reaches an event either.
# as-user: yes
. "$(dirname "$0")/lib.sh"

secrets=(OPENAI_API_KEY=sk-secret-1 PROCTOR_API_KEY=sk-secret-2 HF_TOKEN=hf-secret-3
         FOO_SECRET=secret-4 GITHUB_TOKEN=ghp-secret-5 AWS_SECRET_ACCESS_KEY=secret-6
         ANTHROPIC_API_KEY=secret-7 HUGGING_FACE_HUB_TOKEN=secret-8 DB_PASSWORD=secret-9
         my_api_key=secret-10)
with_env() { env "${secrets[@]}" MY_VAR=1 "$@"; }
secret_names="OPENAI_API_KEY|PROCTOR_API_KEY|HF_TOKEN|FOO_SECRET|GITHUB_TOKEN|AWS_SECRET_ACCESS_KEY|ANTHROPIC_API_KEY|HUGGING_FACE_HUB_TOKEN|DB_PASSWORD|my_api_key"
secret_values="(sk|hf|ghp)?-?secret-[0-9]+"

# the premise: the variables really are in proctor's environment
expect_match "premise: secrets set for proctor" "sk-secret-1" "$(with_env env)"

# ---- sandbox ----
out=$(with_env "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- env); rc=$?
expect_eq "sandbox env runs" 0 $rc
expect_no_match "sandbox: no secret names" "^($secret_names)=" "$out"
expect_no_match "sandbox: no secret values" "$secret_values" "$out"
expect_no_match "sandbox: ordinary host variables do not cross either" "^MY_VAR=" "$out"
expect_match "sandbox: TERM=dumb" "^TERM=dumb$" "$out"
expect_match "sandbox: PATH set" "^PATH=(.*:)?/usr/bin(:|$)" "$out"
expect_match "sandbox: HOME set" "^HOME=/" "$out"
out=$(with_env "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- sh -c 'test -d "$HOME" && test -w "$HOME" && echo home-ok; command -v python3')
expect_eq "sandbox: HOME is a writable directory, PATH finds tools" "home-ok
/usr/bin/python3" "$out"
# nor through /proc: the init is a copy of proctor and holds its environment
out=$(with_env "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- sh -c '
        for p in /proc/self/environ /proc/1/environ /proc/1/cmdline /proc/1/mem; do
                tr "\0" "\n" < $p 2>/dev/null | grep -a -c -E "secret-[0-9]" ; done; true' 2>&1)
expect_no_match "sandbox: no secret via /proc/self or /proc/1" "^[1-9]" "$out"
# the init's memory: scan.py PID scans every readable mapping of PID, if
# the kernel lets it
cat > "$WORK/scan.py" <<'PY'
import re, sys
pid = sys.argv[1]
hits = 0
try:
    maps = open("/proc/%s/maps" % pid).read().splitlines()
    mem = open("/proc/%s/mem" % pid, "rb", buffering=0)
except OSError as e:
    print("denied", e.errno)
    raise SystemExit
for line in maps:
    addr, perms = line.split()[:2]
    if "r" not in perms or line.endswith("[vvar]") or line.endswith("[vsyscall]"):
        continue
    lo, hi = (int(x, 16) for x in addr.split("-"))
    try:
        mem.seek(lo)
        hits += len(re.findall(rb"secret-[0-9]", mem.read(hi - lo)))
    except OSError:
        pass
print("hits", hits)
PY
expect_match "premise: scan.py finds a planted value" "^hits [1-9]" \
        "$(env PLANTED=secret-0 python3 "$WORK/scan.py" self)"
out=$(with_env "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- python3 scan.py 1)
expect_match "sandbox: no secret in the init's memory" "^(denied .*|hits 0)$" "$out"
err=$(with_env "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- printenv OPENAI_API_KEY 2>&1); rc=$?
err=$(without_fallback_note <<<"$err")
expect_eq "sandbox: printenv OPENAI_API_KEY finds nothing" "1:" "$rc:$err"

# ---- local mode ----
out=$(with_env "$PROCTOR" exec --mode local --workspace "$WORK" -- env); rc=$?
expect_eq "local env runs" 0 $rc
expect_no_match "local: no secret names" "^($secret_names)=" "$out"
expect_no_match "local: no secret values" "$secret_values" "$out"
expect_match "local: ordinary variables kept" "^MY_VAR=1$" "$out"
check "local: PATH kept" grep -qxF -- "PATH=$PATH" <<<"$out"
err=$(with_env "$PROCTOR" exec --mode local --workspace "$WORK" -- printenv HF_TOKEN 2>&1); rc=$?
expect_eq "local: printenv HF_TOKEN finds nothing" "1:" "$rc:$err"
out=$(with_env "$PROCTOR" exec --mode local --workspace "$WORK" -- sh -c 'tr "\0" "\n" < /proc/self/environ | grep -c -E "secret-[0-9]"')
expect_eq "local: no secret in /proc/self/environ" 0 "$out"

# ---- events ----
for mode in local sandbox; do
        out=$(with_env "$PROCTOR" exec --mode $mode --workspace "$WORK" --json -- sh -c 'echo visible; env')
        expect_match "$mode --json carries the output" "visible" "$out"
        expect_no_match "$mode --json: no secret in any event" "$secret_values" "$out"
done
finish
