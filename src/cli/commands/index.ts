/** Every CLI command, each registered from its own file (one line per command). */
import type { Command } from "commander";

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [];
