// curate for OpenCode, written by `curate init --host opencode`.
//
// Before a `task` dispatch runs, this plugin hands the dispatch to `curate hook opencode`
// and writes the curated prompt it answers into the dispatch in place. It fails open: when
// curate is missing, slow or has nothing to say, the dispatch goes on unchanged.
// Turn it off for one run with CURATE_HOOKS=0; use another binary with CURATE_BIN.
import { spawnSync } from "node:child_process"

export default async ({ directory } = {}) => ({
  "tool.execute.before": async (input, output) => {
    try {
      if (String(input?.tool ?? "").toLowerCase() !== "task") return
      const args = output?.args
      if (!args || typeof args.prompt !== "string") return
      const r = spawnSync(process.env.CURATE_BIN || "curate", ["hook", "opencode"], {
        input: JSON.stringify({
          tool: input.tool,
          sessionID: input.sessionID,
          callID: input.callID,
          directory,
          args,
        }),
        encoding: "utf8",
        timeout: 20000,
        maxBuffer: 64 * 1024 * 1024,
        windowsHide: true,
      })
      if (r.error || r.status !== 0 || !r.stdout) return
      const reply = JSON.parse(r.stdout)
      if (reply && typeof reply.prompt === "string") args.prompt = reply.prompt
    } catch {
      // Fail open: the dispatch goes on as the lead wrote it.
    }
  },
})
