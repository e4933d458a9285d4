/**
 * Cleaning command output for the model, streaming and pure: invalid UTF-8 bytes and NUL bytes
 * become U+FFFD and are counted (the tool words the notice, so the damage is never hidden: public
 * fault 16), and ANSI escape sequences (CSI, OSC, DCS/SOS/PM/APC strings, two-byte and nF escapes)
 * are removed, including ones split across chunks, so no orphan such as "31m" or lone ESC is left
 * (public fault 15). Sequence shapes follow ECMA-48.
 */

import { isAscii } from "node:buffer";

const ESC = 0x1b;
const BEL = 0x07;
const REPLACEMENT = Buffer.from([0xef, 0xbf, 0xbd]);
/** An OSC or DCS string longer than this is treated as garbage and ends (so output cannot vanish). */
const MAX_STRING_SEQUENCE_BYTES = 4096;

/** Options for an OutputSanitizer. */
export interface SanitizeOptions {
  /** Remove ANSI escape sequences. Default true. */
  stripAnsi?: boolean;
}

/** The result of sanitising a whole buffer. */
export interface SanitizeResult {
  /** Valid UTF-8, no NUL, no ANSI escapes (when stripped). */
  text: string;
  /** Invalid UTF-8 bytes and NUL bytes replaced with U+FFFD. */
  replacedBytes: number;
}

type EscState = "none" | "esc" | "csi" | "nf" | "string" | "stringEsc";

/** Expected length of a UTF-8 sequence from its lead byte; 0 for a byte that cannot lead. */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** Whether `byte` may follow `lead` as the second byte (excludes overlongs, surrogates, > U+10FFFF). */
function validSecond(lead: number, byte: number): boolean {
  if (lead === 0xe0) return byte >= 0xa0 && byte <= 0xbf;
  if (lead === 0xed) return byte >= 0x80 && byte <= 0x9f;
  if (lead === 0xf0) return byte >= 0x90 && byte <= 0xbf;
  if (lead === 0xf4) return byte >= 0x80 && byte <= 0x8f;
  return byte >= 0x80 && byte <= 0xbf;
}

/**
 * Streaming sanitiser: `push` each raw chunk and use the bytes it returns (always valid UTF-8
 * ending on a character boundary); call `end` once at the end of the stream for what was held back.
 * `replacedBytes` counts every invalid or NUL byte replaced so far.
 */
export class OutputSanitizer {
  #carry: Buffer = Buffer.alloc(0);
  #esc: EscState = "none";
  #stringBytes = 0;
  readonly #stripAnsi: boolean;
  replacedBytes = 0;

  constructor(options: SanitizeOptions = {}) {
    this.#stripAnsi = options.stripAnsi ?? true;
  }

  /** Cleans one chunk; an incomplete trailing character is held until the next chunk. */
  push(chunk: Buffer): Buffer {
    // Fast path for the common case, plain ASCII text: nothing to replace, strip or hold back.
    if (
      this.#carry.length === 0 &&
      this.#esc === "none" &&
      isAscii(chunk) &&
      chunk.indexOf(0) === -1 &&
      (!this.#stripAnsi || chunk.indexOf(ESC) === -1)
    ) {
      return chunk;
    }
    return this.#process(this.#carry.length > 0 ? Buffer.concat([this.#carry, chunk]) : chunk, false);
  }

  /** Flushes the stream: a held incomplete character is replaced, an unfinished escape is dropped. */
  end(): Buffer {
    const out = this.#process(this.#carry, true);
    this.#esc = "none";
    return out;
  }

  #process(input: Buffer, final: boolean): Buffer {
    this.#carry = Buffer.alloc(0);
    const out = Buffer.allocUnsafe(input.length * 3);
    let o = 0;
    let i = 0;
    while (i < input.length) {
      const byte = input[i]!;
      if (this.#esc !== "none" && this.#consumeEscape(byte)) {
        i++;
        continue;
      }
      if (byte === ESC && this.#stripAnsi) {
        this.#esc = "esc";
        i++;
      } else if (byte === 0) {
        o += REPLACEMENT.copy(out, o);
        this.replacedBytes++;
        i++;
      } else if (byte < 0x80) {
        out[o++] = byte;
        i++;
      } else {
        const need = sequenceLength(byte);
        let valid = need > 0;
        let k = 1;
        for (; valid && k < need && i + k < input.length; k++) {
          const next = input[i + k]!;
          valid = k === 1 ? validSecond(byte, next) : next >= 0x80 && next <= 0xbf;
        }
        if (valid && k < need) {
          if (!final) {
            this.#carry = Buffer.from(input.subarray(i));
            break;
          }
          valid = false;
        }
        if (valid) {
          o += input.copy(out, o, i, i + need);
          i += need;
        } else {
          o += REPLACEMENT.copy(out, o);
          this.replacedBytes++;
          i++;
        }
      }
    }
    return Buffer.from(out.subarray(0, o));
  }

  /**
   * One byte inside a CSI or nF sequence: 0x20..`lastMiddle` continue it (parameters, intermediates),
   * `lastMiddle`+1..0x7e end it, anything else aborts it.
   */
  #sequenceByte(byte: number, lastMiddle: number): boolean {
    if (byte >= 0x20 && byte <= lastMiddle) return true;
    if (byte > lastMiddle && byte <= 0x7e) {
      this.#esc = "none";
      return true;
    }
    return this.#abortEscape(byte);
  }

  /** Advances the escape-sequence state by one byte; false means the byte is ordinary text again. */
  #consumeEscape(byte: number): boolean {
    switch (this.#esc) {
      case "esc":
        if (byte === 0x5b) this.#esc = "csi";
        else if (byte === 0x5d || byte === 0x50 || byte === 0x58 || byte === 0x5e || byte === 0x5f) {
          this.#esc = "string";
          this.#stringBytes = 0;
        } else if (byte >= 0x20 && byte <= 0x2f) this.#esc = "nf";
        else if (byte >= 0x30 && byte <= 0x7e) this.#esc = "none";
        else return this.#abortEscape(byte);
        return true;
      case "csi":
        return this.#sequenceByte(byte, 0x3f);
      case "nf":
        return this.#sequenceByte(byte, 0x2f);
      case "string":
        if (byte === BEL) this.#esc = "none";
        else if (byte === ESC) this.#esc = "stringEsc";
        else if (++this.#stringBytes > MAX_STRING_SEQUENCE_BYTES) this.#esc = "none";
        return true;
      case "stringEsc":
        if (byte === 0x5c) {
          this.#esc = "none";
          return true;
        }
        this.#esc = "esc";
        return this.#consumeEscape(byte);
      default:
        return false;
    }
  }

  /** An escape interrupted by a byte that cannot continue it: the escape is dropped, the byte kept. */
  #abortEscape(byte: number): boolean {
    if (byte === ESC) {
      this.#esc = "esc";
      return true;
    }
    this.#esc = "none";
    return false;
  }
}

/** Sanitises a whole buffer at once (see OutputSanitizer). */
export function sanitizeOutput(input: Buffer, options: SanitizeOptions = {}): SanitizeResult {
  const sanitizer = new OutputSanitizer(options);
  const text = Buffer.concat([sanitizer.push(input), sanitizer.end()]).toString("utf8");
  return { text, replacedBytes: sanitizer.replacedBytes };
}
