// curate for OpenCode, written by `curate init --host opencode`.
//
// A `task` dispatch starts a sub-agent in a child session whose first message is the
// dispatch's prompt. This plugin hands that message to `curate hook opencode` and writes
// the curated prompt it answers into the child's first message, and only there: the
// lead's own `task` call (the `args` object OpenCode stores in the lead's history) is left
// as the lead wrote it, so the bundle is not resent with every later request of the lead.
// Running at the child's first message, after every plugin's `tool.execute.before`, it
// sees what other injectors added (the aiws or Trellis plugins): one injection only,
// whatever the order of the plugins.
//
// It fails open: when curate is missing, slow or has nothing to say, the dispatch goes on
// unchanged. Turn it off for one run with CURATE_HOOKS=0; use another binary with
// CURATE_BIN.
import { spawnSync } from "node:child_process"

const CURATE = "curate"
// Dispatches seen in a lead session, waiting for their child's first message.
const pending = []
const PENDING_MS = 120000

export default async ({ directory } = {}) => ({
  "tool.execute.before": async (input, output) => {
    try {
      if (String(input?.tool ?? "").toLowerCase() !== "task") return
      const args = output?.args
      // A resumed task (`task_id`) continues a child that has its context already.
      if (!args || typeof args.prompt !== "string" || args.task_id) return
      const now = Date.now()
      while (pending.length && now - pending[0].at > PENDING_MS) pending.shift()
      // The object itself: other plugins may still rewrite its prompt in place.
      pending.push({ args, sessionID: input.sessionID, callID: input.callID, at: now })
    } catch {
      // Fail open.
    }
  },
  "chat.message": async (input, output) => {
    try {
      const parts = output?.parts
      if (!pending.length || !Array.isArray(parts)) return
      const text = (p) => parts.find((x) => x?.type === "text" && x.text === p.args.prompt)
      const i = pending.findIndex((p) => p.sessionID !== input?.sessionID && text(p))
      if (i < 0) return
      const [dispatch] = pending.splice(i, 1)
      const part = text(dispatch)
      const r = spawnSync(process.env.CURATE_BIN || CURATE, ["hook", "opencode"], {
        input: JSON.stringify({
          event: "task",
          tool: "task",
          sessionID: dispatch.sessionID,
          callID: dispatch.callID,
          childSessionID: input.sessionID,
          directory,
          args: { ...dispatch.args, prompt: part.text },
        }),
        encoding: "utf8",
        timeout: 20000,
        maxBuffer: 64 * 1024 * 1024,
        windowsHide: true,
      })
      if (r.error || r.status !== 0 || !r.stdout) return
      const reply = JSON.parse(r.stdout)
      if (reply && typeof reply.prompt === "string") part.text = reply.prompt
    } catch {
      // Fail open: the sub-agent starts with the prompt as the lead wrote it.
    }
  },
})
