/** The hardened container configuration, read back from `docker inspect`, and configurable limits. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox, DEFAULT_IMAGE, getDocker, LABEL } from "../../../../src/sandbox/index.js";
import type { Sandbox } from "../../../../src/sandbox/types.js";
import { describeEngine } from "../../../helpers/engine.js";
import { EXEC_PATHS, leftovers, run, testTenant } from "../../../helpers/sandbox-fixture.js";

const tenant = testTenant("hardening");
const MiB = 1024 * 1024;

for (const execPath of EXEC_PATHS) {
  describeEngine(`DockerSandbox hardening (${execPath})`, () => {
    let defaults: Sandbox;
    let custom: Sandbox;
    beforeAll(async () => {
      [defaults, custom] = await Promise.all([
        createSandbox({ execPath, tenant, sessionId: "test-hardening-defaults", ttlMs: 60_000 }),
        createSandbox({
          execPath,
          tenant,
          limits: {
            memoryBytes: 256 * MiB,
            cpus: 0.5,
            pids: 64,
            tmpBytes: 8 * MiB,
            workspaceBytes: 16 * MiB,
          },
        }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([defaults?.destroy(), custom?.destroy()]);
      expect(await leftovers(tenant)).toEqual([]);
    });

    it("applies every hardening setting with the default limits", async () => {
      const c = await getDocker().getContainer(defaults.info.containerId).inspect();
      const h = c.HostConfig;
      const uid = defaults.info.uid;
      expect(h.NetworkMode).toBe("none");
      expect(h.ReadonlyRootfs).toBe(true);
      expect(h.CapDrop).toEqual(["ALL"]);
      expect(h.CapAdd ?? null).toBeNull();
      expect(h.SecurityOpt).toEqual(["no-new-privileges"]);
      expect(h.Privileged).toBe(false);
      expect(h.PidsLimit).toBe(256);
      // memoryBytes + tmpBytes (/tmp) + tmpBytes (HOME) + 1 MiB (/run/warden) + workspaceBytes:
      // tmpfs pages count against the cgroup.
      expect(h.Memory).toBe((1024 + 64 + 64 + 1 + 1024) * MiB);
      expect(h.MemorySwap).toBe(h.Memory);
      expect(h.NanoCpus).toBe(1e9);
      // docker-init would hold the attach pipes where commands can reach them: the helper is PID 1.
      expect(h.Init).toBe(execPath === "docker-exec");
      expect(h.Runtime).toBe("runc");
      // No engine log: nothing reads it, and json-file would keep whatever reaches PID 1's stdout, uncapped.
      expect(h.LogConfig).toEqual({ Type: "none", Config: {} });
      expect(c.LogPath).toBe("");
      // Its own IPC namespace (the engine's default): /dev/mqueue's queues are the session's alone.
      expect(h.IpcMode).toBe("private");
      expect(h.Tmpfs).toEqual({
        "/tmp": `size=${64 * MiB},mode=1777`,
        "/home/sandbox": `size=${64 * MiB},uid=${uid},gid=${uid},mode=0700`,
        "/run/warden": `size=1m,uid=${uid},gid=${uid},mode=0700`,
      });
      // Its own uid (src/sandbox/sandbox-uid.ts), recorded in its label, never root.
      expect(uid).toBeGreaterThanOrEqual(2 ** 20);
      expect(c.Config.User).toBe(`${uid}:${uid}`);
      expect(c.Config.Labels?.["io.warden.uid"]).toBe(String(uid));
      expect(c.Config.Image).toBe(DEFAULT_IMAGE);
      expect([...(c.Config.Env ?? [])].sort()).toEqual([
        "HOME=/home/sandbox",
        "LANG=C.UTF-8",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      ]);
      // Sorted: the engine lists mounts in no fixed order.
      const mounts = c.Mounts.map((m) => `${m.Type}:${m.Destination}:${m.RW ? "rw" : "ro"}`).sort();
      // With the helper, the channel's socket directory (src/sandbox/docker/channel/socket-dir.ts), read-only.
      const socketDir = execPath === "channel" ? ["bind:/run/warden-channel:ro"] : [];
      expect(mounts).toEqual([...socketDir, "volume:/workspace:rw"]);
      expect(JSON.stringify(c.Mounts)).not.toContain("docker.sock");
      expect(c.Config.Labels?.[LABEL.session]).toBe("test-hardening-defaults");
      expect(c.Config.Labels?.[LABEL.tenant]).toBe(tenant);
      expect(c.Config.Labels?.[LABEL.controller]).toMatch(new RegExp(`:${process.pid}$`));
      const created = Date.parse(c.Config.Labels?.[LABEL.created] ?? "");
      expect(Date.parse(c.Config.Labels?.[LABEL.expires] ?? "") - created).toBe(60_000);
      expect(defaults.info.expiresAt.getTime() - defaults.info.createdAt.getTime()).toBe(60_000);
    });

    it("keeps nothing on the engine's disk of what a command writes to PID 1's stdout", async () => {
      // docker-init runs as the sandbox's user: its stdout is the container's, reachable at /proc/1/fd/1.
      const r = await run(defaults, "head -c 1048576 /dev/zero > /proc/1/fd/1; echo written");
      expect(r.stdout).toBe("written\n");
      const logs = getDocker().getContainer(defaults.info.containerId).logs({ stdout: true, stderr: true });
      await expect(logs).rejects.toMatchObject({ statusCode: 501 });
    });

    it("can write only its workspace, /tmp, HOME, /run/warden, /dev/shm and /dev/mqueue (docs/security.md)", async () => {
      // Every directory or file the sandbox's user may write, outside those six places, would be listed.
      const mine = "^/(workspace|tmp|home/sandbox|run/warden|dev/shm|dev/mqueue)/";
      const r = await run(
        defaults,
        `find / \\( -path /proc -o -path /sys \\) -prune -o \\( -type d -o -type f \\) -writable -print 2>/dev/null | grep -Ev '${mine}' | sort`,
      );
      expect(r.stdout).toBe("/dev/mqueue\n/dev/shm\n/home/sandbox\n/run/warden\n/tmp\n/workspace\n");
    });

    it("gives /dev/shm 64 MiB (full: ENOSPC) and /dev/mqueue only message queues, 800 KiB of them per uid", async () => {
      const r = await run(
        defaults,
        [
          "grep -oE ' /dev/(shm|mqueue) [^ ]+ - [a-z]+ [a-z]+ [^ ]+' /proc/self/mountinfo",
          'head -c 70000000 /dev/zero > /dev/shm/fill 2>/dev/null; echo "fill exit $? size $(stat -c %s /dev/shm/fill)"',
          "rm /dev/shm/fill",
          'echo x 2>/dev/null > /dev/mqueue/file; echo "mqueue file exit $?"',
          "python3 -c \"import os; os.open('/dev/mqueue/q', os.O_CREAT | os.O_WRONLY, 0o600)\" && ls /dev/mqueue",
          'echo "RLIMIT_MSGQUEUE $(ulimit -q) queues_max $(cat /proc/sys/fs/mqueue/queues_max)"',
          "stat -c '%n %a' /dev/shm /dev/mqueue",
        ].join("; "),
      );
      expect(r.stdout).toBe(
        [
          " /dev/mqueue rw,nosuid,nodev,noexec,relatime - mqueue mqueue rw",
          " /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k",
          `fill exit 1 size ${64 * MiB}`,
          // Opening a name creates an (empty) queue; bytes written to it are refused.
          "mqueue file exit 1",
          "file",
          "q",
          "RLIMIT_MSGQUEUE 819200 queues_max 256",
          "/dev/shm 1777",
          "/dev/mqueue 1777",
          "",
        ].join("\n"),
      );
    });

    it("is non-root, has no network, a read-only root and no capabilities inside", async () => {
      const r = await run(
        defaults,
        "id -u; id -g; grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status; " +
          "touch /etc/x 2>&1 | sed 's/.*: //'; ls /sys/class/net; ls /var/run/docker.sock 2>&1 | sed 's/.*: //'",
      );
      expect(r.stdout).toBe(
        `${defaults.info.uid}\n${defaults.info.uid}\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nRead-only file system\nlo\nNo such file or directory\n`,
      );
    });

    it("applies configured limits", async () => {
      const h = (await getDocker().getContainer(custom.info.containerId).inspect()).HostConfig;
      expect(h.Memory).toBe((256 + 8 + 8 + 1 + 16) * MiB);
      expect(h.MemorySwap).toBe((256 + 8 + 8 + 1 + 16) * MiB);
      expect(h.NanoCpus).toBe(5e8);
      expect(h.PidsLimit).toBe(64);
      expect(h.Tmpfs?.["/tmp"]).toBe(`size=${8 * MiB},mode=1777`);
      const df = await run(custom, "df -B1 --output=size /tmp /workspace /home/sandbox | tail -n 3");
      expect(
        df.stdout
          .split("\n")
          .map((l) => Number(l.trim()))
          .slice(0, 3),
      ).toEqual([8 * MiB, 16 * MiB, 8 * MiB]);
    });

    it("reaps orphans that exit inside a call: no zombie is left", async () => {
      const r = await run(
        defaults,
        "for i in 1 2 3 4 5; do bash -c '(sleep 0.2 &) ; exit 0'; done; sleep 1; ps -eo stat= | grep -c '^Z'",
      );
      expect(r.stdout).toBe("0\n");
      expect(r.exitCode).toBe(1);
    });

    if (execPath === "channel") {
      it("runs warden-helper's execute-only copy as PID 1 with one channel-serving child", async () => {
        const r = await run(defaults, "ps -o comm=,args= -p 1; ps -o args= --ppid 1 | grep -c -- '--serve'");
        expect(r.stdout).toBe("warden-helper   /usr/local/libexec/warden/warden-helper\n1\n");
      });
    }
  });
}
