/**
 * An MCP client connected in memory to `serveSessionTools` over `session` (the SDK's
 * InMemoryTransport): what the unit tests of `tools/call`'s bounds speak to.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer, serveSessionTools } from "../../src/mcp/index.js";

/** The session shape serveSessionTools takes. */
export type ServedSession = Parameters<typeof serveSessionTools>[1];

/** Serves `session`'s tools and connects a client to them; `close` ends the client. */
export async function connectSessionTools(
  session: ServedSession,
): Promise<{ client: Client; close: () => Promise<void> }> {
  const server = createMcpServer();
  serveSessionTools(server, session, new AbortController().signal);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(clientSide);
  return { client, close: () => client.close() };
}
