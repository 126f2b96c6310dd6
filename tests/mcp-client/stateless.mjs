// A client of MCP revision 2026-07-28, the official TypeScript SDK's, pinned to it: no
// initialize, no session; the version and client capabilities go in each request's `_meta`.
// It discovers `trust-gate mcp` at the URL given, lists and calls tools (the SDK checks each
// structuredContent against the tool's outputSchema), reads a resource and a prompt, and
// prints what it saw as one JSON object for the Rust test to check.
//
// usage: node stateless.mjs <server URL> <agent asset> [<JSON array of {name, arguments}>]
// (the calls of the array are made in order after the fixed ones, their results printed
// under `more`).

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, asset, moreCalls] = process.argv.slice(2);
if (!url || !asset) {
  console.error('usage: node stateless.mjs <server URL> <agent asset>');
  process.exit(2);
}

// Every exchange the transport makes: its method header, and whether a session was named.
const exchanges = [];
const watching = async (input, init = {}) => {
  const sent = new Headers(init.headers);
  const res = await fetch(input, init);
  exchanges.push({
    httpMethod: init.method ?? 'GET',
    mcpMethod: sent.get('mcp-method'),
    protocolVersion: sent.get('mcp-protocol-version'),
    sentSession: sent.get('mcp-session-id'),
    gotSession: res.headers.get('mcp-session-id'),
    status: res.status,
  });
  return res;
};

const client = new Client(
  { name: 'trust-gate-tests', version: '0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: watching }));

const out = {
  era: client.getProtocolEra(),
  version: client.getNegotiatedProtocolVersion(),
  discover: await client.discover(),
};
const tools = await client.listTools();
out.tools = {
  count: tools.tools.length,
  ttlMs: tools.ttlMs,
  cacheScope: tools.cacheScope,
  resultType: tools.resultType,
  withOutputSchema: tools.tools.filter((t) => t.outputSchema).map((t) => t.name).sort(),
};
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: r.isError ?? false, structuredContent: r.structuredContent, resultType: r.resultType };
};
out.calls = {
  explain: await call('gate_explain_decision', { decision: 'Deny', reason_code: 6 }),
  reputation: await call('gate_get_engine_reputation', { agent_asset: asset }),
  killswitch: await call('gate_get_killswitch', { agent_asset: asset }),
  docs: await call('gate_docs', { query: 'policy' }),
  badInput: await call('gate_get_killswitch', { agent_asset: 'nope' }),
};
out.more = [];
for (const { name, arguments: args } of JSON.parse(moreCalls ?? '[]')) {
  out.more.push({ name, ...(await call(name, args)) });
}
const resources = await client.listResources();
out.resources = { ttlMs: resources.ttlMs, cacheScope: resources.cacheScope };
const read = await client.readResource({ uri: 'gate://docs/policies' });
out.read = { ttlMs: read.ttlMs, cacheScope: read.cacheScope, contents: read.contents.length };
const prompts = await client.listPrompts();
out.prompts = { count: prompts.prompts.length, ttlMs: prompts.ttlMs, cacheScope: prompts.cacheScope };
await client.close();
out.exchanges = exchanges;
console.log(JSON.stringify(out));
