-- Neovim (0.7 and later) drives `curate lsp` headless: opens a broken overrides file and reads
-- its diagnostics, runs the preview (the server shows its document), applies "add to worker's
-- context for add-auth" on a file, runs the preview again, hovers a manifest entry, then types
-- a line in the overrides file and watches the preview document follow. What it sees is
-- written as JSON to $CURATE_NVIM_OUT for the Rust test (tests/it/lsp_nvim.rs) to judge.
--
-- The two pieces marked "docs/editors.md" are the set-up the docs give a Neovim user.
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

-- docs/editors.md: a preview document follows its inputs: reloaded when curate rewrites it.
vim.o.autoread = true
vim.api.nvim_create_autocmd('BufReadPost', {
  pattern = '*/.curate/state/preview/*',
  callback = function(ev)
    vim.bo[ev.buf].modifiable = false
    if vim.b[ev.buf].curate_watch then return end
    vim.b[ev.buf].curate_watch = true
    local watch = vim.loop.new_fs_event()
    watch:start(vim.fn.fnamemodify(ev.file, ':p:h'), {},
      vim.schedule_wrap(function() vim.cmd('checktime') end))
  end,
})

-- docs/editors.md: Neovim 0.7 does not show a document a server asks it to (0.9 and later
-- do): in a split, the cursor left where it was.
local capabilities = vim.lsp.protocol.make_client_capabilities()
capabilities.window.showDocument = { support = true }
local function show_document(_, result)
  local path = vim.uri_to_fname(result.uri)
  vim.schedule(function()
    if vim.fn.bufwinnr(path) == -1 then
      vim.cmd('split ' .. vim.fn.fnameescape(path))
      vim.cmd('wincmd p')
    end
  end)
  return { success = true }
end

-- The text of buffer `buf` as its file holds it.
local function text_of(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  return table.concat(lines, '\n') .. (vim.bo[buf].eol and '\n' or '')
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    cmd = { os.getenv('CURATE_BIN'), 'lsp' },
    cmd_cwd = root,
    root_dir = root,
    name = 'curate',
    capabilities = capabilities,
    handlers = { ['window/showDocument'] = show_document },
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

  -- The preview document the server asked the editor to show.
  local doc = root .. '/.curate/state/preview/add-auth/worker.md'
  vim.wait(10000, function() return vim.fn.bufloaded(doc) == 1 end, 20)
  local doc_buf = vim.fn.bufnr(doc)
  assert(doc_buf > 0, 'the preview document was not shown')
  seen.doc = text_of(doc_buf)
  seen.doc_readonly = vim.bo[doc_buf].readonly
  seen.doc_modifiable = vim.bo[doc_buf].modifiable

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
  -- What `curate preview` prints now, from the command line.
  seen.cli_after_add = vim.fn.system({ 'sh', '-c',
    '"$0" preview --role worker --change add-auth 2>/dev/null', os.getenv('CURATE_BIN') })
  vim.wait(10000, function()
    return text_of(doc_buf):find('=== package.json ===', 1, true) ~= nil
  end, 20)
  seen.doc_after_add = text_of(doc_buf)

  -- Typed in the overrides file, not saved: the preview document follows.
  vim.cmd('edit ' .. root .. '/changes/add-auth/analysis/worker-context.overrides.jsonl')
  vim.cmd('checktime')
  local overrides = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(overrides, -1, -1, false, { '{"drop": "package.json"}' })
  vim.wait(10000, function()
    return text_of(doc_buf):find('- package.json: dropped by ', 1, true) ~= nil
  end, 20)
  seen.doc_after_typing = text_of(doc_buf)
  seen.overrides_modified = vim.bo[overrides].modified
  vim.cmd('write')
end)
finish(not ok and tostring(err) or nil)
