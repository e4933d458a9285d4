/**
 * The command model's coreutils family (commands/model.ts): the option grammar of the GNU
 * coreutils agents use (options as in coreutils 9.x manuals), and which forms write files
 * (`cp`, `mv`, `rm`, `tee`, `dd of=`, `sort -o`…) or run programs (`split --filter`).
 * A command that only reads its operands and prints has no effect; any option outside its
 * grammar makes the form unknown. The written paths are judged by path rules like redirections.
 */
import { type Grammar, gnu, words } from "./grammar.js";

/** Writes every operand (`rm`, `mkdir`, `touch`, `tee`…) when there is one. */
const WRITES_ALL = {
  operandEffect: { effect: "write", unless: [] },
  writeOperands: "all",
} as const satisfies Partial<Grammar>;

/** Why `--files0-from=F` (GNU sort, wc, du) reads any file: F, or stdin for `-`, lists the names. */
const FILES0_FROM = { "files0-from": "it reads the files a list names (--files0-from)" };
/** `-c`/`--check`: the operands (or stdin) list the files the checksum tool reads. */
const CHECKS = {
  c: "it reads the files its checksum list names (-c)",
  check: "it reads the files its checksum list names (--check)",
};
const CHECKSUM = gnu("bctwz", "", "binary check tag text ignore-missing quiet status strict warn zero", {
  readsAny: CHECKS,
});
const NO_OPTIONS: Grammar = { long: words("help version") };
/** Shell builtins and commands whose words are operands or operators, never options with effects. */
const FREE: Grammar = { permissive: true };

export const COREUTILS: Record<string, Grammar> = {
  cat: gnu(
    "AbeEnstTuv",
    "",
    "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
  ),
  tac: gnu("br", "s", "before regex separator="),
  head: gnu("qvz", "cn", "bytes= lines= quiet silent verbose zero-terminated", { numeric: true }),
  tail: gnu(
    "fFqvz",
    "cns",
    "bytes= follow? lines= max-unchanged-stats= pid= quiet silent retry sleep-interval= verbose zero-terminated",
    { numeric: true },
  ),
  wc: gnu("cmlLw", "", "bytes chars lines files0-from= max-line-length words total=", {
    readsAny: FILES0_FROM,
  }),
  ls: gnu(
    "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
    "ITw",
    "all almost-all author escape block-size= ignore-backups color? directory dired classify? " +
      "file-type format= full-time group-directories-first no-group human-readable si " +
      "dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink? " +
      "indicator-style= inode ignore= kibibytes dereference literal numeric-uid-gid " +
      "hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size " +
      "sort= time= time-style= tabsize= width= context zero",
  ),
  cp: gnu(
    "abdfHilLnPprRsTuvxZ",
    "St",
    "archive attributes-only backup? copy-contents debug force interactive link dereference " +
      "no-clobber no-dereference preserve? no-preserve= parents recursive reflink? " +
      "remove-destination sparse= strip-trailing-slashes suffix= symbolic-link target-directory= " +
      "no-target-directory update? verbose keep-directory-symlink one-file-system context?",
    {
      operandEffect: { effect: "write", unless: [] },
      writeOptions: ["t", "target-directory"],
      writeOperands: "last",
    },
  ),
  mv: gnu(
    "bfinTuvZ",
    "St",
    "backup? debug exchange force interactive no-clobber no-copy strip-trailing-slashes suffix= " +
      "target-directory= no-target-directory update? verbose context",
    { ...WRITES_ALL, writeOptions: ["t", "target-directory"] },
  ),
  rm: gnu(
    "fiIrRdv",
    "",
    "force interactive? one-file-system no-preserve-root preserve-root? recursive dir verbose",
    WRITES_ALL,
  ),
  rmdir: gnu("pv", "", "ignore-fail-on-non-empty parents verbose", WRITES_ALL),
  mkdir: gnu("pvZ", "m", "mode= parents verbose context?", WRITES_ALL),
  touch: gnu("acfhm", "drt", "no-create date= no-dereference reference= time=", WRITES_ALL),
  // chmod's modes look like options (`chmod -w f`): every word is taken; every form writes.
  chmod: { permissive: true, always: ["write"], writeOperands: "all" },
  chown: { permissive: true, always: ["write"], writeOperands: "all" },
  chgrp: { permissive: true, always: ["write"], writeOperands: "all" },
  ln: gnu(
    "bdfFinLPrsTv",
    "St",
    "backup? directory force interactive logical no-dereference physical relative symbolic " +
      "suffix= target-directory= no-target-directory verbose",
    // The link's target is written too: a link to `.env` would let a later read name it otherwise.
    { ...WRITES_ALL, writeOptions: ["t", "target-directory"] },
  ),
  link: { ...NO_OPTIONS, ...WRITES_ALL },
  unlink: { ...NO_OPTIONS, ...WRITES_ALL },
  mkfifo: gnu("Z", "m", "mode= context?", WRITES_ALL),
  mktemp: gnu("dqutp", "", "directory dry-run quiet suffix= tmpdir?", { always: ["write"] }),
  tee: gnu("aip", "", "append ignore-interrupts output-error?", WRITES_ALL),
  shred: gnu("fnuvxz", "ns", "force iterations= random-source= size= remove? verbose exact zero", WRITES_ALL),
  truncate: gnu("co", "rs", "no-create io-blocks reference= size=", WRITES_ALL),
  install: gnu(
    "bcCdDpsvTZ",
    "gmoSt",
    "backup? compare directory group= mode= owner= preserve-timestamps strip strip-program= " +
      "suffix= target-directory= no-target-directory verbose preserve-context context?",
    {
      operandEffect: { effect: "write", unless: [] },
      effects: { "strip-program": "exec" },
      writeOptions: ["t", "target-directory"],
      writeOperands: "last",
    },
  ),
  dd: { ...NO_OPTIONS, operandEffect: { effect: "write", unless: [] }, writeOperands: { prefix: "of=" } },
  split: gnu(
    "dxeu",
    "abClnt",
    "suffix-length= additional-suffix= bytes= line-bytes= numeric-suffixes? hex-suffixes? " +
      "elide-empty-files filter= lines= number= separator= unbuffered verbose",
    { operandEffect: { effect: "write", unless: [] }, effects: { filter: "exec" }, writeOperands: "second" },
  ),
  csplit: gnu(
    "kmszn",
    "bf",
    "suffix-format= prefix= keep-files suppress-matched digits= quiet silent elide-empty-files",
    {
      always: ["write"],
    },
  ),
  cut: gnu(
    "nsz",
    "bcdf",
    "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated",
  ),
  tr: gnu("cCdst", "", "complement delete squeeze-repeats truncate-set1"),
  uniq: gnu(
    "cdDiuz",
    "fsw",
    "count repeated all-repeated? group? ignore-case skip-fields= skip-chars= unique zero-terminated check-chars=",
    { numeric: true, writeOperands: "second", operands: (ops) => (ops.length > 1 ? "write" : null) },
  ),
  paste: gnu("sz", "d", "delimiters= serial zero-terminated"),
  join: gnu("eiz", "atjo", "ignore-case check-order nocheck-order header zero-terminated"),
  comm: gnu("123z", "", "check-order nocheck-order output-delimiter= total zero-terminated"),
  fold: gnu("bs", "w", "bytes spaces width=", { numeric: true }),
  fmt: gnu("cstup", "gw", "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal=", {
    numeric: true,
  }),
  nl: gnu(
    "p",
    "bdfhilnsvw",
    "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= " +
      "join-blank-lines= number-format= no-renumber number-separator= starting-line-number= number-width=",
  ),
  od: gnu(
    "bcdfilosvx",
    "AjNSTw",
    "address-radix= endian= skip-bytes= read-bytes= format= output-duplicates strings? traditional width?",
  ),
  base64: gnu("diw", "", "decode ignore-garbage wrap="),
  expand: gnu("i", "t", "initial tabs=", { numeric: true }),
  unexpand: gnu("a", "t", "all first-only tabs=", { numeric: true }),
  rev: NO_OPTIONS,
  echo: FREE,
  printf: FREE,
  true: FREE,
  false: FREE,
  test: FREE,
  "[": FREE,
  cd: gnu("LPe@", "", ""),
  pwd: gnu("LP", "", "logical physical"),
  basename: gnu("az", "s", "multiple suffix= zero"),
  dirname: gnu("z", "", "zero"),
  realpath: gnu(
    "eLmPqsz",
    "",
    "canonicalize-existing canonicalize-missing logical physical quiet relative-to= relative-base= strip no-symlinks zero",
  ),
  readlink: gnu(
    "efmnqsvz",
    "",
    "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero",
  ),
  stat: gnu("Lft", "c", "dereference file-system format= printf= terse cached="),
  du: gnu(
    "0abcDhHklLmPsSx",
    "BdtX",
    "null all apparent-size block-size= bytes total dereference-args max-depth= human-readable " +
      "inodes count-links dereference no-dereference separate-dirs si summarize threshold= time? " +
      "time-style= exclude-from= exclude= one-file-system files0-from=",
    { readsAny: FILES0_FROM },
  ),
  df: gnu(
    "ahHiklPTv",
    "Btx",
    "all block-size= human-readable si inodes local no-sync output? portability sync total type= print-type exclude-type=",
  ),
  // GNU diff and cmp write nothing and run nothing (`--paginate` runs pr on the output, a printer).
  diff: { permissive: true, shortValue: "CDFILSUWxX" },
  cmp: gnu("bilsv", "n", "print-bytes ignore-initial= verbose bytes= quiet silent"),
  date: gnu(
    "uR",
    "dfrs",
    "date= debug file= iso-8601? resolution rfc-email rfc-3339= reference= set= universal utc",
    {
      shortOptional: "I",
      effects: { s: "write", set: "write" },
    },
  ),
  seq: gnu("w", "fs", "format= separator= equal-width", { numeric: true }),
  sleep: NO_OPTIONS,
  /** bash's read builtin: reads a line of stdin into variables (their names: commandHazard). */
  read: { short: "ers", shortValue: "adinNptu" },
  whoami: NO_OPTIONS,
  nproc: gnu("", "", "all ignore="),
  id: gnu("agGnruzZ", "", "context group groups name real user zero"),
  uname: gnu(
    "asnrvmpio",
    "",
    "all kernel-name nodename kernel-release kernel-version machine processor hardware-platform operating-system",
  ),
  printenv: gnu("0", "", "null"),
  which: gnu("as", "", ""),
  file: {
    permissive: true,
    shortValue: "eFfmP",
    readsAny: {
      f: "it reads the files a list names (-f)",
      "files-from": "it reads the files a list names (--files-from)",
    },
    effects: { C: "write", compile: "write" },
  },
  sha1sum: CHECKSUM,
  sha224sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha384sum: CHECKSUM,
  sha512sum: CHECKSUM,
  md5sum: CHECKSUM,
  b2sum: gnu("bctwz", "l", "binary check length= tag text ignore-missing quiet status strict warn zero", {
    readsAny: CHECKS,
  }),
  cksum: gnu(
    "bcz",
    "al",
    "algorithm= base64 check length= raw tag untagged ignore-missing quiet status strict warn zero",
    { readsAny: CHECKS },
  ),
};
