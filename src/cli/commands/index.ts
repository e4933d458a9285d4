/** Every CLI command, each registered from its own file (one line per command). */
import type { Command } from "commander";
import { registerApply } from "./apply.js";
import { registerAttach } from "./attach.js";
import { registerAudit } from "./audit.js";
import { registerDiff } from "./diff.js";
import { registerExec } from "./exec.js";
import { registerGc } from "./gc.js";
import { registerImages } from "./images.js";
import { registerMcp } from "./mcp.js";
import { registerPolicy } from "./policy.js";
import { registerReplay } from "./replay.js";
import { registerRun } from "./run.js";
import { registerServe } from "./serve.js";

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  registerExec,
  registerReplay,
  registerImages,
  registerGc,
  registerPolicy,
  registerRun,
  registerDiff,
  registerApply,
  registerServe,
  registerMcp,
  registerAudit,
  registerAttach,
];
