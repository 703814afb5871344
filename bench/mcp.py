#!/usr/bin/env python3
"""Times `curate mcp` answering its `preview` tool, warm: starts the server, initializes, calls
the tool once (warms the OS page cache and the token cache), then times RUNS calls, one at a
time, from the request written to the answer read. Prints the median in ms and the server's
peak resident memory in KiB (VmHWM; "n/a" off Linux) on one line.

    python3 bench/mcp.py CURATE REPO [RUNS]

Python 3 standard library only. Exits non-zero, with the reason on stderr, when an answer is
not a READY preview.
"""
import json
import statistics
import subprocess
import sys
import time


def main():
    curate, repo = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    server = subprocess.Popen(
        [curate, "-C", repo, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )

    def ask(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        if "id" not in message:
            return None
        answer = json.loads(server.stdout.readline())
        if answer.get("id") != message["id"]:
            sys.exit(f"mcp.py: unexpected answer {answer}")
        return answer

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "preview", "arguments": {"role": "worker", "change": "add-auth"}}
    times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        answer = ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call})
        elapsed = time.perf_counter() - t0
        # A preview answers its status header first: `READY · role worker · …`.
        content = answer.get("result", {}).get("content") or [{}]
        status = (content[0].get("text") or "").split(" ", 1)[0]
        if status != "READY":
            sys.exit(f"mcp.py: not a READY preview: {json.dumps(answer)[:300]}")
        if i > 0:
            times.append(elapsed * 1000)
    peak = "n/a"
    try:
        with open(f"/proc/{server.pid}/status") as status:
            peak = next(l.split()[1] for l in status if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        pass
    server.stdin.close()
    code = server.wait(timeout=10)
    if code != 0:
        sys.exit(f"mcp.py: curate mcp exited {code}")
    print("%.1f %s" % (statistics.median(times), peak))


if __name__ == "__main__":
    main()
