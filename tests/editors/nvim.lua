-- Neovim (0.7 and later) drives `curate lsp` headless: opens a broken overrides file and reads
-- its diagnostics, runs the preview, applies "add to worker's context for add-auth" on a file,
-- runs the preview again and hovers a manifest entry. What it sees is written as JSON to
-- $CURATE_NVIM_OUT for the Rust test (tests/it/lsp_nvim.rs) to judge.
local root = os.getenv('CURATE_NVIM_ROOT')
local out = os.getenv('CURATE_NVIM_OUT')
local seen = {}

local function finish(err)
  if err then seen.error = err end
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(seen))
  f:close()
  vim.cmd('qall!')
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    cmd = { os.getenv('CURATE_BIN'), 'lsp' },
    cmd_cwd = root,
    root_dir = root,
    name = 'curate',
  })
  assert(client_id, 'the client did not start')
  local client = vim.lsp.get_client_by_id(client_id)

  -- A broken overrides line: its error at its place.
  vim.cmd('edit ' .. root .. '/changes/add-auth/analysis/worker-context.overrides.jsonl')
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, client_id)
  vim.wait(10000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
  seen.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(seen.diagnostics, { lnum = d.lnum, col = d.col, message = d.message })
  end

  -- Fixed in the buffer (not saved): the diagnostics go.
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '{"drop": "src/tokenizer.rs"}' })
  vim.wait(10000, function() return #vim.diagnostic.get(buf) == 0 end, 20)
  seen.after_fix = #vim.diagnostic.get(buf)
  vim.cmd('write')

  local function preview()
    local r = client.request_sync('workspace/executeCommand', {
      command = 'curate.preview',
      arguments = { { role = 'worker', change = 'add-auth' } },
    }, 20000, buf)
    assert(r and r.result, 'no preview: ' .. vim.inspect(r))
    return r.result
  end
  seen.preview = preview()

  -- The code lens on the manifest's first line, and a hover on its first entry.
  vim.cmd('edit ' .. root .. '/changes/add-auth/analysis/worker-context.jsonl')
  local manifest = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(manifest, client_id)
  local lens = client.request_sync('textDocument/codeLens',
    { textDocument = vim.lsp.util.make_text_document_params(manifest) }, 10000, manifest)
  seen.lens = lens.result[1].command
  local line = 0
  for i, l in ipairs(vim.api.nvim_buf_get_lines(manifest, 0, -1, false)) do
    if l:sub(1, 1) == '{' then line = i - 1; break end
  end
  local hover = client.request_sync('textDocument/hover', {
    textDocument = vim.lsp.util.make_text_document_params(manifest),
    position = { line = line, character = 2 },
  }, 20000, manifest)
  seen.hover = hover.result.contents.value

  -- "add to worker's context for add-auth" on package.json, then the preview again.
  vim.cmd('edit ' .. root .. '/package.json')
  local file = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(file, client_id)
  local actions = client.request_sync('textDocument/codeAction', {
    textDocument = vim.lsp.util.make_text_document_params(file),
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
    context = { diagnostics = {} },
  }, 10000, file)
  seen.actions = {}
  for _, a in ipairs(actions.result) do
    table.insert(seen.actions, a.title)
    if a.title == "add to worker's context for add-auth" then
      local done = client.request_sync('workspace/executeCommand', a.command, 20000, file)
      seen.added = done.result
    end
  end
  seen.preview_after_add = preview()
end)
finish(not ok and tostring(err) or nil)
