/**
 * The synthetic starting workspace of the generated corpus: files that hit the hard parts of Pi's
 * tools (line endings, BOM, curly quotes, tabs, long lines, long files, binary, invalid UTF-8,
 * images, symlinks, NFC/NFD names, nested .gitignore files inside and outside a git repository).
 * Deterministic for a seed; written to a host directory that both sides copy (nothing here runs it).
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Jimp } from "jimp";

/** Small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "needle",
  "Needle",
  "foo",
  "bar",
  "café",
  "naïve",
  "x+y",
  "a.b",
];

function lines(rand: () => number, count: number, prefix = "line"): string[] {
  return Array.from({ length: count }, (_, i) => {
    const w = WORDS[Math.floor(rand() * WORDS.length)];
    return `${prefix} ${i + 1} ${w}`;
  });
}

/** A solid-colour image of `width`×`height` encoded as `mime` (jimp). */
async function image(
  width: number,
  height: number,
  mime: "image/png" | "image/jpeg" | "image/gif",
): Promise<Buffer> {
  const img = new Jimp({ width, height, color: 0x3366ccff });
  for (let x = 0; x < Math.min(width, 50); x++) img.setPixelColor(0xff0000ff, x, Math.min(x, height - 1));
  return img.getBuffer(mime);
}

/** Text and binary files of the workspace, by relative path (NFD names kept as NFD bytes). */
export async function workspaceFiles(seed: number): Promise<Map<string, string | Buffer>> {
  const rand = prng(seed);
  const f = new Map<string, string | Buffer>();
  f.set("README.md", "# Fixture\n\nA workspace for the Pi fidelity suite.\n");
  f.set("plain.txt", `${lines(rand, 40).join("\n")}\n`);
  f.set("no-final-newline.txt", lines(rand, 5).join("\n"));
  f.set("empty.txt", "");
  f.set("one-newline.txt", "\n");
  f.set("crlf.txt", `${lines(rand, 12).join("\r\n")}\r\n`);
  f.set("mixed.txt", "first\r\nsecond\nthird\r\nfourth\n");
  f.set("cr-only.txt", "one\rtwo\rthree\r");
  f.set("bom.txt", `\ufeff${lines(rand, 6).join("\n")}\n`);
  f.set("bom-crlf.txt", `\ufeff${lines(rand, 6).join("\r\n")}\r\n`);
  f.set("quotes.txt", 'He said “hello” and ‘bye’ — then left…\nplain "ascii" quotes\nnbsp\u00a0here\n');
  f.set("tabs.ts", "function f() {\n\tif (x) {\n\t\treturn 1;   \n\t}\n\treturn 2;\n}\n");
  f.set("dup.txt", "same\nother\nsame\nlast\n");
  f.set("long-first-line.txt", `${"x".repeat(60 * 1024)}\nsecond line\n`);
  f.set("long-third-line.txt", `one\ntwo\n${"y".repeat(52 * 1024)}\nfour\n`);
  f.set("wide.txt", `${Array.from({ length: 30 }, (_, i) => `${i} ${"z".repeat(3000)}`).join("\n")}\n`);
  f.set("big.txt", `${lines(rand, 2500).join("\n")}\n`);
  f.set("exact-2000.txt", `${lines(rand, 2000).join("\n")}\n`);
  f.set("binary.dat", Buffer.from([0x00, 0x01, 0x02, 0xff, 0x00, 0x41, 0x42, 0x0a]));
  f.set("latin1.txt", Buffer.from("caf\xe9 na\xefve\nsecond line\n", "latin1"));
  f.set(
    "invalid-utf8.txt",
    Buffer.concat([Buffer.from("ok "), Buffer.from([0xc3, 0x28]), Buffer.from(" end\n")]),
  );
  f.set("ansi.txt", "\u001b[31mred\u001b[0m text\n");
  f.set("nul-late.txt", Buffer.concat([Buffer.from("a".repeat(5000)), Buffer.from([0]), Buffer.from("b\n")]));
  f.set("src/main.ts", 'export function main(): number {\n\tconsole.log("hi");\n\treturn 0;\n}\n');
  f.set("src/util.ts", "export const add = (a: number, b: number) => a + b;\n// TODO: needle\n");
  f.set("src/nested/deep.ts", "export const deep = 'needle';\n");
  f.set("src/data.json", '{"a": 1, "needle": true}\n');
  f.set("src/.hidden.ts", "export const hidden = 1; // needle\n");
  f.set("docs/guide.md", `${lines(rand, 30, "guide").join("\n")}\n`);
  f.set("docs/long-match.md", `start ${"needle ".repeat(120)}end\n`);
  f.set("edit/a.txt", "alpha\nbeta\ngamma\n");
  f.set("edit/crlf.txt", "one\r\ntwo\r\nthree\r\n");
  f.set("edit/bom.txt", "\ufeffhead\nbody\n");
  f.set("edit/quotes.txt", "say “hi” now\nand ‘this’\n");
  f.set("edit/tabs.py", "def f():\n\tif True:\n\t\treturn 1\n\treturn 2\n");
  f.set("edit/multi.txt", "one\ntwo\nthree\nfour\nfive\n");
  f.set("edit/trailing.txt", "keep   \nthis  \n");
  f.set("edit/latin1.txt", Buffer.from("caf\xe9\n", "latin1"));
  f.set("edit/dashes.txt", "a – b — c\n");
  f.set("edit/mixed.txt", "a\r\nb\nc\r\n");
  // .gitignore nested outside a git repository, and inside one (made a repository by the first batch).
  f.set("outside/.gitignore", "ignored.txt\n*.log\n");
  f.set("outside/kept.txt", "needle kept\n");
  f.set("outside/ignored.txt", "needle ignored\n");
  f.set("outside/sub/.gitignore", "deeper.txt\n");
  f.set("outside/sub/deeper.txt", "needle deeper\n");
  f.set("outside/sub/visible.txt", "needle visible\n");
  f.set("outside/app.log", "needle log\n");
  f.set("repo/.gitignore", "build/\n");
  f.set("repo/src/.gitignore", "gen.ts\n");
  f.set("repo/src/gen.ts", "needle generated\n");
  f.set("repo/src/app.ts", "needle app\n");
  f.set("repo/build/out.js", "needle built\n");
  f.set("many/.keep", "");
  for (let i = 0; i < 30; i++) f.set(`many/file-${String(i).padStart(2, "0")}.txt`, `needle ${i}\n`);
  f.set("Mixed/Bravo.txt", "b\n");
  f.set("Mixed/alpha.txt", "a\n");
  f.set("Mixed/Charlie/x.txt", "c\n");
  f.set("Mixed/.dot", "d\n");
  f.set("spaces in name.txt", "spaced\n");
  f.set("nfc-caf\u00e9.txt", "stored in NFC\n");
  f.set("nfd-cafe\u0301.txt", "stored in NFD\n");
  f.set("images/large.png", await image(2400, 300, "image/png"));
  f.set("images/tall.jpg", await image(200, 2600, "image/jpeg"));
  f.set("images/small.png", await image(32, 16, "image/png"));
  f.set("images/small.jpg", await image(40, 30, "image/jpeg"));
  f.set("images/small.gif", await image(20, 10, "image/gif"));
  f.set("images/wide.gif", await image(2100, 40, "image/gif"));
  f.set("images/one.png", await image(1, 1, "image/png"));
  f.set("images/tiny.gif", Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1"));
  const png = f.get("images/small.png") as Buffer;
  f.set("images/truncated.png", png.subarray(0, Math.min(60, png.length)));
  const jpg = f.get("images/small.jpg") as Buffer;
  f.set("images/truncated.jpg", jpg.subarray(0, Math.floor(jpg.length / 2)));
  f.set("images/not-really.png", "just text, named .png\n");
  return f;
}

/** Writes the workspace to `dir`: the files, then the symlinks and the empty directory. */
export async function writeWorkspace(dir: string, seed: number): Promise<void> {
  for (const [rel, data] of await workspaceFiles(seed)) {
    const path = join(dir, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, data);
  }
  await mkdir(join(dir, "empty-dir"), { recursive: true });
  await symlink("plain.txt", join(dir, "link-to-file"));
  await symlink("src", join(dir, "link-to-dir"));
  await symlink("does-not-exist.txt", join(dir, "dangling-link"));
  await symlink("/etc/passwd", join(dir, "link-outside"));
  await symlink("../..", join(dir, "src/up-two"));
  await symlink("loop-b", join(dir, "loop-a"));
  await symlink("loop-a", join(dir, "loop-b"));
}
