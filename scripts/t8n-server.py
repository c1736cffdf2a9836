#!/usr/bin/env python3
"""cbqs-t8n-server/v1 (docs/fixtures.md section 4.1) in front of a per-call t8n command.

An example for node teams: the whole protocol, with sessions kept as the post-state file the
command wrote, in the standard library only. Usage: t8n-server.py "<per-call t8n command>"
(run by /bin/sh with --input.alloc/--input.txs/--input.env/--output.result/--output.alloc).
"""
import json, os, shutil, signal, subprocess, sys, tempfile

MAX_LINE = 64 * 1024 * 1024
if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help") or not sys.argv[1].strip():
    sys.stderr.write(__doc__.split("\n\n")[1].strip() + "\n")
    sys.exit(0 if sys.argv[1:] in (["-h"], ["--help"]) else 2)
command, sessions, opened = sys.argv[1], {}, 0  # sessions: name -> [post-state text, height]
work = tempfile.mkdtemp(prefix="t8n-server-")
path = lambda name: os.path.join(work, name)
out = sys.stdout

def send(answer):
    out.write(json.dumps(answer, separators=(",", ":"), ensure_ascii=False) + "\n")
    out.flush()

def t8n(alloc_text, txs, env):
    """One per-call run; returns (result, post-state text) or raises RuntimeError."""
    for name, text in (("alloc.json", alloc_text), ("txs.json", json.dumps(txs)), ("env.json", json.dumps(env))):
        with open(path(name), "w") as f:
            f.write(text)
    flags = ["--input.alloc", path("alloc.json"), "--input.txs", path("txs.json"), "--input.env", path("env.json"),
             "--output.result", path("result.json"), "--output.alloc", path("post.json")]
    run = subprocess.run(["/bin/sh", "-c", command + ' "$@"', "t8n", *flags], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise RuntimeError("the t8n command exited %d: %s" % (run.returncode, (run.stderr.strip().splitlines() or [""])[-1]))
    with open(path("result.json")) as r, open(path("post.json")) as p:
        return json.load(r), p.read()

def handle(req):
    global opened
    method = req.get("method")
    if method == "apply":
        result, post = t8n(json.dumps(req["alloc"]), req["txs"], req["env"])
        return {"result": result, "post_state": json.loads(post)} if req.get("want_post_state") else {"result": result}
    if method == "session.open":
        if len(sessions) >= 16:
            return {"error": {"code": "too_many_sessions", "message": "16 sessions are open"}}
        opened += 1
        sessions["s%d" % opened] = [json.dumps(req["alloc"]), int(req["alloc"]["height"])]
        return {"session": "s%d" % opened, "height": req["alloc"]["height"]}
    if method in ("session.apply", "session.post_state", "session.close"):
        name = req.get("session")
        if name not in sessions:
            return {"error": {"code": "unknown_session", "message": "no open session %s" % json.dumps(name)}}
        if method == "session.close":
            del sessions[name]
            return {"closed": name}
        if method == "session.post_state":
            return {"post_state": json.loads(sessions[name][0])}
        height = int(req["env"]["height"])
        if height <= sessions[name][1]:
            return {"error": {"code": "invalid_request", "message": "$.env.height: block %d is not above the session's height %d" % (height, sessions[name][1])}}
        result, post = t8n(sessions[name][0], req["txs"], req["env"])
        sessions[name] = [post, height]
        return {"result": result}
    return {"error": {"code": "unknown_method", "message": "unknown method %s" % json.dumps(method)}}

def serve():
    send({"protocol": "cbqs-t8n-server/v1", "implementation": "scripts/t8n-server.py", "max_line_bytes": MAX_LINE,
          "max_sessions": 16, "session_state_root": "per_block"})
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline(MAX_LINE + 1)
        if not line:
            break
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # discard the rest of the line, a chunk at a time
                line = stdin.readline(1 << 20)
            send({"id": None, "error": {"code": "line_too_long", "message": "above max_line_bytes %d" % MAX_LINE}})
            continue
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as e:
            send({"id": None, "error": {"code": "parse_error", "message": str(e)}})
            continue
        try:
            send({"id": req.get("id"), **handle(req)})
        except (KeyError, TypeError, ValueError) as e:
            send({"id": req.get("id"), "error": {"code": "invalid_request", "message": "missing or wrong member %s" % e}})
        except RuntimeError as e:
            send({"id": req.get("id"), "error": {"code": "t8n_failed", "message": str(e)}})

# A client ends us with EOF (then we return) or SIGTERM; either way the temporary directory goes.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
try:
    serve()
finally:
    shutil.rmtree(work, ignore_errors=True)
