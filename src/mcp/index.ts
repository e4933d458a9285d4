/** MCP: a warden session's tools served to MCP clients (stdio in the CLI, streamable HTTP in serve). */
export { ElicitationApproval } from "./elicitation-approval.js";
export {
  createMcpServer,
  DETAILS_META_KEY,
  type McpCallRequest,
  type McpToolSession,
  mcpToolsOf,
  PROGRESS_MESSAGE_MAX_CHARS,
  progressMessage,
  serveSessionTools,
  toCallToolResult,
} from "./tool-server.js";
