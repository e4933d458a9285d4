/**
 * attack-38a F5: an `rw` session is the host directory, and the sandbox's uid is a host uid: a
 * command that made its own file set-user-ID (`cp /bin/sh sh2 && chmod 4755 sh2`) left a program
 * of that uid on the host for any local user who can reach the directory. warden-helper's seccomp
 * filter (images/sandbox/helper/filemode.go, version 8) refuses every set-user-ID and set-group-ID
 * mode, on the channel and, through `warden-helper --seccomp-exec`, on the docker-exec path
 * (src/sandbox/docker/exec/seccomp-wrap.ts). Docker only: a Kubernetes sandbox has no rw mode.
 */
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createTestSandbox } from "../../helpers/backend.js";
import { describeEngine } from "../../helpers/engine.js";

const SANDBOX_UID = 1000;
const DENIED = "Operation not permitted";

/**
 * Each command, what it must print on stderr (exactly) and exit with, and what the host must then
 * hold at `path`: its permission bits (`mode & 0o7777`), or null for nothing.
 */
const CASES: {
  name: string;
  script: string;
  stderr: string;
  exit: number;
  path: string;
  hostMode: number | null;
}[] = [
  {
    name: "chmod 4755",
    script: "cp /bin/sh sh2 && chmod 4755 sh2",
    stderr: `chmod: changing permissions of 'sh2': ${DENIED}\n`,
    exit: 1,
    path: "sh2",
    hostMode: 0o755,
  },
  {
    name: "chmod u+s",
    script: "printf 'id\\n' > us && chmod u+s us",
    stderr: `chmod: changing permissions of 'us': ${DENIED}\n`,
    exit: 1,
    path: "us",
    hostMode: 0o644,
  },
  {
    name: "install -m 4755",
    script: "install -m 4755 /bin/true inst",
    stderr: `install: cannot change permissions of 'inst': ${DENIED}\n`,
    exit: 1,
    path: "inst",
    hostMode: 0o600,
  },
  {
    name: "cp -p of a set-user-ID file",
    script: "cp -p suid-src copied",
    stderr: `cp: preserving permissions for 'copied': ${DENIED}\n`,
    exit: 1,
    path: "copied",
    hostMode: 0o700, // cp creates it owner-only and fails to widen it
  },
  {
    name: "python os.open(O_CREAT, 0o4755)",
    script:
      "python3 -c \"import os; os.open('py', os.O_CREAT | os.O_WRONLY, 0o4755)\" 2>&1 >/dev/null | tail -n 1 >&2",
    stderr: `PermissionError: [Errno 1] ${DENIED}: 'py'\n`,
    exit: 0,
    path: "py",
    hostMode: null,
  },
  {
    name: "mkdir -m 2755",
    script: "mkdir -m 2755 sgid-dir",
    stderr: `mkdir: cannot create directory 'sgid-dir': ${DENIED}\n`,
    exit: 1,
    path: "sgid-dir",
    hostMode: null,
  },
  {
    name: "chmod +x (allowed)",
    script: "printf 'echo ok\\n' > run.sh && chmod +x run.sh && ./run.sh >/dev/null",
    stderr: "",
    exit: 0,
    path: "run.sh",
    hostMode: 0o755,
  },
  {
    name: "a sticky directory (allowed)",
    script: "mkdir shared && chmod 1777 shared",
    stderr: "",
    exit: 0,
    path: "shared",
    hostMode: 0o1777,
  },
];

/**
 * Ordinary work under the filter: mkdir -p, a sticky directory, cp -a, tar x (GNU tar as a user
 * drops an entry's set-user-ID bit itself), git checkout of an executable, npm install of a local
 * package's tarball and pip install of a local wheel (one entry 04755: pip writes permission bits
 * only), all offline. Prints one line per step.
 */
const ORDINARY = [
  "set -e",
  "mkdir -p a/b/c && echo hi > a/b/c/f && chmod 1777 a/b && cp -a a a2 && stat -c '%a' a2/b",
  "tar cf t.tar a && mkdir x && tar xf t.tar -C x && tar cf s.tar --mode=4755 a/b/c/f && tar xf s.tar -C x && stat -c '%a' x/a/b/c/f",
  "git init -q r && cd r && git config user.email t@t && git config user.name t",
  "printf '#!/bin/sh\\n' > e && chmod +x e && git add e && git commit -qm one && git checkout -qb two",
  "git rm -q e && git commit -qm two && git checkout -q - && stat -c '%a' e && cd ..",
  'mkdir pkg app && printf \'{"name":"lp","version":"1.0.0","bin":{"lp":"lp.js"}}\' > pkg/package.json',
  "printf '#!/usr/bin/env node\\n' > pkg/lp.js && (cd pkg && npm pack -q >/dev/null 2>&1) && cd app",
  'printf \'{"name":"app","version":"1.0.0"}\' > package.json',
  "npm install -q --offline --no-audit --no-fund ../pkg/lp-1.0.0.tgz >/dev/null 2>&1 && stat -c '%a' node_modules/lp/lp.js && cd ..",
  "python3 -c \"import zipfile; z = zipfile.ZipFile('w-1.0-py3-none-any.whl', 'w'); z.writestr('w/__init__.py', 'X = 1'); " +
    "i = zipfile.ZipInfo('w/tool.sh'); i.external_attr = 0o104755 << 16; z.writestr(i, '#!/bin/sh'); " +
    "z.writestr('w-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: w\\nVersion: 1.0\\n'); " +
    "z.writestr('w-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'); " +
    "z.writestr('w-1.0.dist-info/RECORD', ''); z.close()\"",
  "python3 -m venv v && v/bin/pip install -q --no-index ./w-1.0-py3-none-any.whl && stat -c '%a' v/lib/python3*/site-packages/w/tool.sh",
].join("\n");

describeEngine("rw: no set-user-ID or set-group-ID file reaches the host directory", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const execPath of ["channel", "docker-exec"] as const) {
    it(`${execPath}: chmod 4755, chmod u+s, install -m 4755, cp -p, os.open 0o4755 and mkdir -m 2755 fail with EPERM and leave no set-ID bit; chmod +x and 1777 work`, async () => {
      await expectRefusals(setidHost(dirs), { execPath, runtime: "runc" });
    });

    it(`${execPath}: mkdir -p, cp -a, tar x, git checkout, npm install and pip install work under the filter`, async () => {
      const host = setidHost(dirs);
      await using sb = await createTestSandbox({
        execPath,
        tenant: "test-setid",
        workspace: { hostPath: host, mode: "rw" },
      });
      let out = "";
      let err = "";
      const r = await sb.exec(
        { shell: ORDINARY },
        {
          onStdout: (chunk) => {
            out += chunk.toString("utf8");
          },
          onStderr: (chunk) => {
            err += chunk.toString("utf8");
          },
        },
      );
      expect({ exit: r.exitCode, out, err }).toEqual({ exit: 0, out: "1777\n755\n755\n755\n755\n", err: "" });
    });

    it(`${execPath}: writeFile refuses a set-ID mode and drops the set-ID bits of the file it replaces`, async () => {
      const host = setidHost(dirs);
      await using sb = await createTestSandbox({
        execPath,
        tenant: "test-setid",
        workspace: { hostPath: host, mode: "rw" },
      });
      await expect(sb.writeFile("w.sh", Buffer.from("x\n"), { mode: 0o4755 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message:
          "mode 0o4755 has the set-user-ID or set-group-ID bit, which no sandbox file may have; give permission bits and the sticky bit only (at most 0o1777).",
      });
      expect(existsSync(join(host, "w.sh"))).toBe(false);
      await sb.writeFile("suid-src", Buffer.from("#!/bin/sh\necho new\n"));
      expect(statSync(join(host, "suid-src")).mode & 0o7777).toBe(0o755);
    });
  }

  it("channel on runsc (gVisor): the same refusals, the same host modes", async () => {
    await expectRefusals(setidHost(dirs), { execPath: "channel", runtime: "runsc" });
  });

  it("docker-exec: an rw sandbox whose image has no warden-helper 8 runs no command", async () => {
    const host = setidHost(dirs);
    await using sb = await createTestSandbox({
      execPath: "docker-exec",
      tenant: "test-setid",
      image: "debian:bookworm-slim", // no warden-helper at all
      workspace: { hostPath: host, mode: "rw" },
    });
    await expect(sb.exec({ shell: "cp /bin/sh sh2 && chmod 4755 sh2" })).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
      message:
        'this rw sandbox\'s image has no warden-helper 8 or later (/usr/local/bin/warden-helper), so its commands would run over docker exec without the seccomp filter that keeps set-user-ID and set-group-ID files out of the host directory; nothing was run: rebuild the image (npm run images), or use workspace mode "copy"',
    });
    expect(existsSync(join(host, "sh2"))).toBe(false);
  });
});

/**
 * A host directory for an rw sandbox (owned by the sandbox's uid), holding `suid-src`: a
 * set-user-ID file of the sandbox's uid put there by the host. Added to `dirs` for removal.
 */
function setidHost(dirs: string[]): string {
  const host = mkdtempSync(join(tmpdir(), "warden-setid-"));
  dirs.push(host);
  chownSync(host, SANDBOX_UID, SANDBOX_UID);
  writeFileSync(join(host, "suid-src"), "#!/bin/sh\n");
  chownSync(join(host, "suid-src"), SANDBOX_UID, SANDBOX_UID);
  chmodSync(join(host, "suid-src"), 0o4755);
  return host;
}

/** Runs CASES in an rw sandbox of `host` and checks each one's exit, stderr and the host's mode. */
async function expectRefusals(
  host: string,
  options: { execPath: "channel" | "docker-exec"; runtime: "runc" | "runsc" },
): Promise<void> {
  await using sb = await createTestSandbox({
    ...options,
    tenant: "test-setid",
    workspace: { hostPath: host, mode: "rw" },
  });
  for (const c of CASES) {
    let stderr = "";
    const r = await sb.exec(
      { shell: c.script },
      {
        env: { LC_ALL: "C" },
        onStderr: (chunk) => {
          stderr += chunk.toString("utf8");
        },
      },
    );
    expect({ name: c.name, exit: r.exitCode, stderr }).toEqual({
      name: c.name,
      exit: c.exit,
      stderr: c.stderr,
    });
    const at = join(host, c.path);
    expect({ name: c.name, mode: existsSync(at) ? statSync(at).mode & 0o7777 : null }).toEqual({
      name: c.name,
      mode: c.hostMode,
    });
  }
}
