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
// After an edit (`write`, `edit`, `multiedit`, `apply_patch`, `bash`) that may touch a
// workflow's list (a `.jsonl` file, a command or patch naming `trellis`), it hands the edit
// to `curate hook opencode` too: curate compiles the lists the edit touched, so that
// Trellis' plugin, which reads a list at the dispatch, reads it compiled; when one is not
// READY, curate's note is added to the tool's result for the lead.
//
// It fails open: when curate is missing, slow or has nothing to say, the dispatch goes on
// unchanged. Turn it off for one run with CURATE_HOOKS=0; use another binary with
// CURATE_BIN.
import { spawnSync } from "node:child_process"

const CURATE = "curate"
// Dispatches seen in a lead session, waiting for their child's first message.
const pending = []
const PENDING_MS = 120000
// The argument of each editing tool that names what it touched.
const EDITS = { write: "filePath", edit: "filePath", multiedit: "filePath", apply_patch: "patchText", patch: "patchText", bash: "command" }
// Edits seen before they ran, by call, waiting for `tool.execute.after`.
const edits = new Map()

const run = (payload) => {
  const r = spawnSync(process.env.CURATE_BIN || CURATE, ["hook", "opencode"], {
    input: JSON.stringify(payload),
    encoding: "utf8",
    timeout: 20000,
    maxBuffer: 64 * 1024 * 1024,
    windowsHide: true,
  })
  if (r.error || r.status !== 0 || !r.stdout) return undefined
  return JSON.parse(r.stdout)
}

export default async ({ directory } = {}) => ({
  "tool.execute.before": async (input, output) => {
    try {
      const tool = String(input?.tool ?? "").toLowerCase()
      const key = EDITS[tool]
      if (key) {
        const value = output?.args?.[key]
        const file = key === "filePath"
        if (typeof value === "string" && (file ? /\.jsonl$/i.test(value) : value.includes("trellis"))) {
          if (edits.size > 256) edits.clear()
          edits.set(input.callID, { tool, args: { [key]: value } })
        }
        return
      }
      if (tool !== "task") return
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
      const reply = run({
        event: "task",
        tool: "task",
        sessionID: dispatch.sessionID,
        callID: dispatch.callID,
        childSessionID: input.sessionID,
        directory,
        args: { ...dispatch.args, prompt: part.text },
      })
      if (reply && typeof reply.prompt === "string") part.text = reply.prompt
    } catch {
      // Fail open: the sub-agent starts with the prompt as the lead wrote it.
    }
  },
  "tool.execute.after": async (input, output) => {
    try {
      const edit = edits.get(input?.callID)
      if (!edit) return
      edits.delete(input.callID)
      const reply = run({ event: "edit", tool: edit.tool, sessionID: input.sessionID, callID: input.callID, directory, args: edit.args })
      if (reply && typeof reply.context === "string" && output && typeof output.output === "string") {
        output.output += "\n\n" + reply.context
      }
    } catch {
      // Fail open: the edit's result stays as the tool gave it.
    }
  },
})
