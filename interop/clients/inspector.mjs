// The MCP Inspector's CLI, run as a person runs it: one `mcp-inspector --cli --format json`
// process, so one connection, per method. It exits 5 when a tool answers isError, printing the
// result all the same.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fromResult, play, version } from './lib.mjs';

const versions = {
  '@modelcontextprotocol/inspector': version('@modelcontextprotocol/inspector'),
  '@modelcontextprotocol/client': version('@modelcontextprotocol/client', '@modelcontextprotocol/inspector'),
};
const launcher = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url));
const toolErrorExit = 5;

function inspect(transport, target, args) {
  const server = transport === 'http'
    ? ['--transport', 'http', target.url]
    : ['--transport', 'stdio', '--', target.command, ...target.args];
  const argv = [launcher, '--cli', '--format', 'json', ...args, ...server];
  return new Promise((resolve, reject) => {
    // The timeout only guards against a hang (interop_test.go bounds the whole session too).
    execFile(process.execPath, argv, { timeout: 240_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err && err.code !== toolErrorExit) {
        reject(new Error(`mcp-inspector ${args.join(' ')}: ${err.message}\nstderr: ${stderr}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout).result);
      } catch (e) {
        reject(new Error(`mcp-inspector ${args.join(' ')}: stdout is not its JSON report (${e.message}): ${stdout}\nstderr: ${stderr}`));
      }
    });
  });
}

await play('@modelcontextprotocol/inspector', versions, async (transport, target) => ({
  // --strict: a tool schema the Inspector finds not portable across vendors (an error-severity
  // finding) fails the listing with exit 6 and the findings on stderr.
  listTools: async () => (await inspect(transport, target, ['--method', 'tools/list', '--strict'])).tools.map((t) => t.name),
  call: async (tool, args) => fromResult(await inspect(transport, target,
    ['--method', 'tools/call', '--tool-name', tool, '--tool-args-json', JSON.stringify(args)])),
  close: async () => {},
}));
