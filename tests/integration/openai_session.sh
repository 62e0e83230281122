# openai_session: sourced by the t_*openai*/t_model_* scripts (after lib.sh):
# one headless session against tests/fake_openai.py on 127.0.0.1.
#
# session NAME [PROCTOR ARGS...]: serves $WORK/NAME.script, runs one
# session against it; status in $rc, the trace in $WORK/NAME.trace, stderr
# in $WORK/NAME.err, the server's request log in $WORK/NAME.log. stdout goes
# to $WORK/NAME.jsonl (events, --json) or, with S_HUMAN=1, to $WORK/NAME.out.
# S_KEY: the API key set for proctor (default $KEY; empty: none at all);
# S_NOAUTH=1: the server takes any request, key or not;
# S_BASE: the path after host:port in --base-url (default /v1).

# fake_start NAME: the server for $WORK/NAME.script, on $port (pid $srv)
fake_start() {
        local auth=()
        [ "${S_NOAUTH:-0}" = 1 ] || auth=(--expect-key "$KEY")
        "$T_PY" "$TOP/tests/fake_openai.py" --script "$WORK/$1.script" --log "$WORK/$1.log" \
                "${auth[@]}" --ignore-stdin >"$WORK/$1.port" 2>"$WORK/$1.srv" &
        srv=$!
        for _ in $(seq 100); do grep -q PORT "$WORK/$1.port" 2>/dev/null && break; sleep 0.05; done
        port=$(awk '/PORT/ { print $2 }' "$WORK/$1.port")
}
fake_stop() {
        kill "$srv" 2>/dev/null
        wait "$srv" 2>/dev/null
}
session() {
        local name=$1 out=$WORK/$1.jsonl json=--json
        shift
        fake_start "$name"
        if [ "${S_HUMAN:-0}" = 1 ]; then
                out=$WORK/$name.out
                json=
        fi
        local keyenv=(PROCTOR_API_KEY="${S_KEY-$KEY}")
        [ -z "${S_KEY-$KEY}" ] && keyenv=(-u PROCTOR_API_KEY)
        env -u OPENAI_API_KEY -u HF_TOKEN "${keyenv[@]}" "$PROCTOR" run $json --mode local \
                --model openai:fake-model --base-url "http://127.0.0.1:$port${S_BASE-/v1}" \
                --workspace "$WORK" --trace "$WORK/$name.trace" "$@" "please work" \
                >"$out" 2>"$WORK/$name.err"
        rc=$?
        fake_stop
}
