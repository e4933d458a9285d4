/**
 * Session records: one small JSON file per live session under `<stateDir>/sessions/`, written
 * atomically (temp file, fsync, rename, fsync of the directory), so a `kill -9` at any instant leaves
 * either the old record or the new one, never a torn file. On restart these records say which
 * labelled containers are this server's sessions to adopt.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { InvalidArgumentError } from "../../errors.js";
import type { ToolSelection } from "../../pipeline/index.js";
import type { ProcessRecord } from "../../process/index.js";
import type { SandboxLimits, WorkspaceMode } from "../../sandbox/index.js";
import type { SessionSecretRequest } from "../secrets/index.js";

/** What the server keeps about one session across restarts. Times are ISO-8601. */
export interface SessionRecord {
  version: 1;
  id: string;
  tenant: string;
  containerId: string;
  image: string;
  workspaceMode: WorkspaceMode;
  /** Host directory the workspace came from (the original for /changes in copy mode). */
  workspaceHostPath?: string;
  /** True when workspaceHostPath is an uploaded tar's unpacked copy, owned by the server. */
  uploaded?: boolean;
  limits: Partial<SandboxLimits>;
  toolSelection?: ToolSelection;
  /** The session's non-secret environment variables, set again when a restarted server adopts it. */
  env?: Record<string, string>;
  /** The domains the session asked for (`network.allow`): its network is rebuilt from them on adoption. */
  networkAllow?: string[];
  /** The secrets it asked for (names, never values): given again, from the store, on adoption. */
  secrets?: SessionSecretRequest[];
  /** Its background processes' records (src/process): their shims are kept on adoption. */
  processes?: ProcessRecord[];
  createdAt: string;
  /** Max-lifetime deadline. */
  expiresAt: string;
}

const ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** Reads and writes session records in one directory. */
export class RecordStore {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, "sessions");
  }

  /** Creates the directory (0700) and removes temp files a crash left behind. */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const name of await readdir(this.dir)) {
      if (name.includes(".tmp-")) await rm(join(this.dir, name), { force: true });
    }
  }

  /** Writes (or replaces) a record atomically and durably. */
  async put(record: SessionRecord): Promise<void> {
    const final = this.path(record.id);
    const tmp = `${final}.tmp-${randomBytes(6).toString("hex")}`;
    const fh = await open(tmp, "w", 0o600);
    try {
      await fh.writeFile(`${JSON.stringify(record)}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, final);
    await this.syncDir();
  }

  /** Removes a record; no error when it is already gone. */
  async delete(id: string): Promise<void> {
    await rm(this.path(id), { force: true });
    await this.syncDir();
  }

  /** Every readable record. Unparsable files are returned in `invalid` (file names), not thrown. */
  async list(): Promise<{ records: SessionRecord[]; invalid: string[] }> {
    const records: SessionRecord[] = [];
    const invalid: string[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      if (!name.endsWith(".json")) continue;
      try {
        const value = JSON.parse(await readFile(join(this.dir, name), "utf8")) as SessionRecord;
        if (value.version === 1 && typeof value.id === "string" && typeof value.containerId === "string") {
          records.push(value);
        } else invalid.push(name);
      } catch {
        invalid.push(name);
      }
    }
    return { records, invalid };
  }

  private path(id: string): string {
    if (!ID_PATTERN.test(id)) throw new InvalidArgumentError(`Invalid session id for a record file: '${id}'`);
    return join(this.dir, `${id}.json`);
  }

  private async syncDir(): Promise<void> {
    const fh = await open(this.dir, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
}
