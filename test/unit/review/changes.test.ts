/** Review: changes from a sandbox vs the host, git-format patch (checked with git apply), diffstat. */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  applyChanges,
  collectChanges,
  computeDiffstat,
  formatDiffstat,
  formatPatch,
  gitBlobId,
  type HostBase,
  hostPathFor,
  patchChanges,
  snapshotHost,
} from "../../../src/review/index.js";
import type { WorkspaceChange } from "../../../src/sandbox/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

/** The shared FakeSandbox with files (".sh" ones executable) and links under /workspace, and the change list. */
function fakeSandbox(
  files: Record<string, string | Buffer | { link: string }>,
  changed: WorkspaceChange[],
): FakeSandbox {
  const sandbox = new FakeSandbox({ changes: changed });
  for (const [path, entry] of Object.entries(files)) {
    if (typeof entry === "object" && "link" in entry) sandbox.symlink(path, entry.link);
    else sandbox.file(path, entry, path.endsWith(".sh") ? 0o755 : 0o644);
  }
  // Only `readlink -n -- <path>` is asked for, to show a sandbox link by its target.
  sandbox.execHandler = ([command, , , path]) => {
    const node = sandbox.nodes.get(path ?? "");
    if (command !== "readlink" || node?.type !== "symlink") throw new Error("unexpected");
    return { stdout: [node.target] };
  };
  return sandbox;
}

function hostFixture(): string {
  const root = mkdtempSync(join(tmpdir(), "warden-review-"));
  writeFileSync(join(root, "keep.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
  writeFileSync(join(root, "gone.txt"), "bye\n");
  mkdirSync(join(root, "src"));
  writeFileSync(join(root, "src/app.js"), "console.log(1)");
  return root;
}

const changed: WorkspaceChange[] = [
  { path: "gone.txt", kind: "deleted" },
  { path: "keep.txt", kind: "modified" },
  { path: "link", kind: "added" },
  { path: "run.sh", kind: "added" },
  { path: "src/app.js", kind: "modified" },
];
const sandboxFiles = {
  "keep.txt": "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n",
  "run.sh": "#!/bin/sh\necho hi\n",
  "src/app.js": "console.log(2)\n",
  link: { link: "/etc/passwd" },
};

describe("review changes", () => {
  it("builds a git-format patch that git apply accepts and that reproduces the sandbox files", async () => {
    const host = hostFixture();
    const changes = await collectChanges(fakeSandbox(sandboxFiles, changed), host);
    const patch = await formatPatch(changes);
    expect(patch).toBe(
      [
        "diff --git a/gone.txt b/gone.txt",
        "deleted file mode 100644",
        "index b023018cabc396e7692c70bbf5784a93d3f738ab..0000000000000000000000000000000000000000",
        "--- a/gone.txt",
        "+++ /dev/null",
        "@@ -1,1 +0,0 @@",
        "-bye",
        "diff --git a/keep.txt b/keep.txt",
        "index 2019eda923040a79f52fe4bf49e0a106f4f658ae..4d3ab13574ef22dc31779e9c3d301b96669bd938",
        "--- a/keep.txt",
        "+++ b/keep.txt",
        "@@ -1,7 +1,7 @@",
        " one",
        " two",
        " three",
        "-four",
        "+FOUR",
        " five",
        " six",
        " seven",
        "diff --git a/link b/link",
        "new file mode 120000",
        "index 0000000000000000000000000000000000000000..3594e94c04db171e2767224db355f514b13715c5",
        "--- /dev/null",
        "+++ b/link",
        "@@ -0,0 +1,1 @@",
        "+/etc/passwd",
        "\\ No newline at end of file",
        "diff --git a/run.sh b/run.sh",
        "new file mode 100755",
        "index 0000000000000000000000000000000000000000..4163036efa65bd4a469e752267498f01ea36a55c",
        "--- /dev/null",
        "+++ b/run.sh",
        "@@ -0,0 +1,2 @@",
        "+#!/bin/sh",
        "+echo hi",
        "diff --git a/src/app.js b/src/app.js",
        "index 29348283b7f333cd147926c51f1540af628f7efd..32926e25ddb39cdb2fc3013d482472c07d735c7b",
        "--- a/src/app.js",
        "+++ b/src/app.js",
        "@@ -1,1 +1,1 @@",
        "-console.log(1)",
        "\\ No newline at end of file",
        "+console.log(2)",
        "",
      ].join("\n"),
    );
    const copy = mkdtempSync(join(tmpdir(), "warden-review-apply-"));
    cpSync(host, copy, { recursive: true });
    writeFileSync(join(copy, "p.patch"), patch);
    execFileSync("git", ["apply", "p.patch"], { cwd: copy });
    expect(readFileSync(join(copy, "keep.txt"), "utf8")).toBe(sandboxFiles["keep.txt"]);
    expect(readFileSync(join(copy, "src/app.js"), "utf8")).toBe("console.log(2)\n");
    expect(readFileSync(join(copy, "run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
  });

  it("never reads through a symlink: it is carried by its target text, special (never applied)", async () => {
    const changes = await collectChanges(fakeSandbox(sandboxFiles, changed), hostFixture());
    expect(changes.find((c) => c.path === "link")).toEqual({
      path: "link",
      kind: "added",
      oldBytes: null,
      newBytes: Buffer.from("/etc/passwd"),
      newLink: true,
      special: "symlink",
    });
  });

  it("carries binary changes as full-index git binary patches that git apply takes", async () => {
    const host = hostFixture();
    const pyc = Buffer.from([
      0x55,
      0x0d,
      0x0d,
      0x0a,
      0,
      0,
      0,
      0,
      ...Array.from({ length: 300 }, (_, i) => i % 256),
    ]);
    writeFileSync(join(host, "old.pyc"), pyc);
    writeFileSync(join(host, "gone.bin"), Buffer.from([1, 0, 2]));
    const changedPyc = Buffer.concat([pyc, Buffer.from([0, 9, 9, 9])]);
    const fresh = Buffer.from([0, 1, 2, 3, 4, 5]);
    const changes = await collectChanges(
      fakeSandbox({ "old.pyc": changedPyc, "b.bin": fresh }, [
        { path: "b.bin", kind: "added" },
        { path: "gone.bin", kind: "deleted" },
        { path: "old.pyc", kind: "modified" },
      ]),
      host,
    );
    const patch = await formatPatch(changes);
    expect(patch).toContain(
      "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..",
    );
    expect(patch.split("GIT binary patch").length).toBe(4);
    const copy = mkdtempSync(join(tmpdir(), "warden-review-bin-"));
    cpSync(host, copy, { recursive: true });
    writeFileSync(join(copy, "p.patch"), patch);
    execFileSync("git", ["apply", "--check", "p.patch"], { cwd: copy });
    execFileSync("git", ["apply", "p.patch"], { cwd: copy });
    expect(readFileSync(join(copy, "old.pyc"))).toEqual(changedPyc);
    expect(readFileSync(join(copy, "b.bin"))).toEqual(fresh);
    expect(() => readFileSync(join(copy, "gone.bin"))).toThrow(/ENOENT/);
  });

  it("case: the patch is against the session start, so a host edit made meanwhile is neither reverted nor lost", async () => {
    const host = hostFixture();
    const bytes: HostBase = new Map();
    const snapshot = await snapshotHost(host, { base: bytes });
    // The user edits a file during the run; the session changed another line of it.
    writeFileSync(join(host, "keep.txt"), "ONE (user)\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    const sandbox = fakeSandbox(sandboxFiles, [{ path: "keep.txt", kind: "modified" }]);
    const changes = await collectChanges(sandbox, host, { base: { snapshot, bytes } });
    const patch = await formatPatch(changes);
    expect(patch).not.toContain("ONE (user)");
    expect(patch).toContain("\n-four\n+FOUR\n");
    expect(patch).toContain(`index ${gitBlobId(Buffer.from("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"))}..`);
    // git's own three-way apply takes it too, in a repository that has the session-start blob.
    const repo = mkdtempSync(join(tmpdir(), "warden-review-git-"));
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: repo });
    git("init", "-q");
    writeFileSync(join(repo, "keep.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    git("add", ".");
    git("commit", "-qm", "base");
    writeFileSync(join(repo, "keep.txt"), "ONE (user)\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    git("add", "keep.txt"); // --3way works on the index: the user's edit staged
    writeFileSync(join(repo, "p.patch"), patch);
    git("apply", "--3way", "p.patch");
    expect(readFileSync(join(repo, "keep.txt"), "utf8")).toBe(
      "ONE (user)\ntwo\nthree\nFOUR\nfive\nsix\nseven\n",
    );
    const result = await applyChanges(host, changes);
    expect(result.merged).toEqual(["keep.txt"]);
    expect(readFileSync(join(host, "keep.txt"), "utf8")).toBe(
      "ONE (user)\ntwo\nthree\nFOUR\nfive\nsix\nseven\n",
    );
  });

  it("computes a diffstat like git's", async () => {
    const changes = await collectChanges(fakeSandbox(sandboxFiles, changed), hostFixture());
    const stat = computeDiffstat(await patchChanges(changes));
    expect(stat.added).toBe(4);
    expect(stat.removed).toBe(3);
    expect(formatDiffstat(stat)).toBe(
      [
        " gone.txt   |    1 -",
        " keep.txt   |    2 +-",
        " link       | (symlink, not applied)",
        " run.sh     |    2 ++",
        " src/app.js |    2 +-",
        " 5 files changed, 4 insertions(+), 3 deletions(-)",
        "",
      ].join("\n"),
    );
  });

  it("confines paths to the host workspace", () => {
    expect(hostPathFor("/h/ws", "a/b.txt")).toBe("/h/ws/a/b.txt");
    expect(hostPathFor("/h/ws", "..foo")).toBe("/h/ws/..foo");
    expect(() => hostPathFor("/h/ws", "../x")).toThrow("Path '../x' resolves to '/h/x'");
    expect(() => hostPathFor("/h/ws", "/etc/passwd")).toThrow("outside the workspace");
  });

  it("ignores a host symlink's target when reading the old side", async () => {
    const host = hostFixture();
    symlinkSync("/etc/hostname", join(host, "hl"));
    const changes = await collectChanges(
      fakeSandbox({ hl: "x\n" }, [{ path: "hl", kind: "modified" }]),
      host,
    );
    // A link replaced by a regular file is no special entry: warden apply replaces the link itself.
    expect(changes[0]).toEqual({
      path: "hl",
      kind: "modified",
      oldBytes: Buffer.from("/etc/hostname"),
      newBytes: Buffer.from("x\n"),
      oldLink: true,
      mode: 0o644,
    });
    // As git shows a file that replaced a link: the link deleted (by its target), the file added.
    expect(await formatPatch(changes)).toBe(
      [
        "diff --git a/hl b/hl",
        "deleted file mode 120000",
        `index ${gitBlobId(Buffer.from("/etc/hostname"))}..0000000000000000000000000000000000000000`,
        "--- a/hl",
        "+++ /dev/null",
        "@@ -1,1 +0,0 @@",
        "-/etc/hostname",
        "\\ No newline at end of file",
        "diff --git a/hl b/hl",
        "new file mode 100644",
        `index 0000000000000000000000000000000000000000..${gitBlobId(Buffer.from("x\n"))}`,
        "--- /dev/null",
        "+++ b/hl",
        "@@ -0,0 +1,1 @@",
        "+x",
        "",
      ].join("\n"),
    );
  });

  it("case: a deleted host link is shown by its target, never by the content of the file it names", async () => {
    const host = hostFixture();
    const secret = join(mkdtempSync(join(tmpdir(), "warden-secret-")), "marker");
    writeFileSync(secret, "SECRET-MARKER\n");
    symlinkSync(secret, join(host, "leak"));
    const changes = await collectChanges(fakeSandbox({}, [{ path: "leak", kind: "deleted" }]), host);
    const patch = await formatPatch(changes);
    expect(patch).toBe(
      [
        "diff --git a/leak b/leak",
        "deleted file mode 120000",
        `index ${gitBlobId(Buffer.from(secret))}..0000000000000000000000000000000000000000`,
        "--- a/leak",
        "+++ /dev/null",
        "@@ -1,1 +0,0 @@",
        `-${secret}`,
        "\\ No newline at end of file",
        "",
      ].join("\n"),
    );
  });

  it("never reads through a linked parent directory on the host (the old side is absent)", async () => {
    const host = hostFixture();
    const outside = mkdtempSync(join(tmpdir(), "warden-secret-"));
    writeFileSync(join(outside, "marker"), "SECRET-MARKER\n");
    symlinkSync(outside, join(host, "dir"));
    const changes = await collectChanges(fakeSandbox({}, [{ path: "dir/marker", kind: "deleted" }]), host);
    expect(changes).toEqual([{ path: "dir/marker", kind: "deleted", oldBytes: null, newBytes: null }]);
    expect(await formatPatch(changes)).toBe("");
  });

  it("marks files over maxFileBytes with oversize: 'mark' (shown as binary), or names the limit", async () => {
    const host = hostFixture();
    const sandbox = fakeSandbox({ "keep.txt": "x".repeat(100) }, [{ path: "keep.txt", kind: "modified" }]);
    const marked = await collectChanges(sandbox, host, { maxFileBytes: 50, oversize: "mark" });
    expect(await formatPatch(marked)).toBe(
      "diff --git a/keep.txt b/keep.txt\nBinary files a/keep.txt and b/keep.txt differ\n",
    );
    await expect(collectChanges(sandbox, host, { maxFileBytes: 50 })).rejects.toThrow(
      "Sandbox file keep.txt is 100 bytes, over the review limit of 50.",
    );
  });

  it("stops reading at maxTotalBytes over all sides: later files are marked, or the limit is named", async () => {
    const files = { "a.txt": "a".repeat(40), "b.txt": "b".repeat(40), "c.txt": "c".repeat(10) };
    const added: WorkspaceChange[] = ["a.txt", "b.txt", "c.txt"].map((path) => ({ path, kind: "added" }));
    const marked = await collectChanges(fakeSandbox(files, added), undefined, {
      maxTotalBytes: 60,
      oversize: "mark",
    });
    expect(marked.map((c) => [c.path, c.newBytes?.length, c.oversize])).toEqual([
      ["a.txt", 40, undefined],
      ["b.txt", 0, true],
      ["c.txt", 10, undefined],
    ]);
    await expect(collectChanges(fakeSandbox(files, added), undefined, { maxTotalBytes: 60 })).rejects.toThrow(
      "Sandbox file b.txt is 40 bytes, over what is left (20) of the review's total limit of 60.",
    );
  });

  it("reads a host file only up to the size it had when opened (a file growing meanwhile is not read on)", async () => {
    // /proc files report size 0 whatever they hold: the stand-in for a file that grew after its stat.
    const changes = await collectChanges(
      fakeSandbox({ status: "x\n" }, [{ path: "status", kind: "modified" }]),
      "/proc/self",
    );
    expect(changes[0]?.oldBytes).toEqual(Buffer.alloc(0));
  });
});
