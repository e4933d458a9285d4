/**
 * Fitting an image for the model, as Pi 0.73.1's read does (coding-agent utils/image-resize.ts, with
 * Photon there and jimp here): an image within 2000×2000 px and 4.5 MB of base64 is sent as it is;
 * a larger one is scaled to fit 2000×2000, encoded as PNG, then as JPEG at qualities 80, 85, 70, 55,
 * 40, and the first encoding under 4.5 MB wins; failing that, the size shrinks by a quarter and the
 * encodings are tried again, down to 1×1. An image that cannot be decoded is omitted.
 *
 * The bytes come from the sandbox, so they are untrusted. Unlike Pi, decoding is bounded: the header's
 * size is checked first (at most MAX_DECODE_PIXELS), and so is a GIF's first frame (which omggif
 * allocates for, and which may be far larger than the logical screen: a 1x1 GIF with a 65535x65535
 * frame took 2.2 GB); decoding runs in a worker process (util/worker-process.ts, every thread at
 * low priority) that is killed once it has used IMAGE_DECODE_CPU_MS of CPU time; and at most
 * IMAGE_DECODE_SLOTS decodes run at once (the pixels live outside the worker's heap limit, so a batch
 * of many image reads must not decode them all together). So a hostile image can neither exhaust the
 * controller's memory nor stall its event loop. Each decode gets a fresh worker process, killed when
 * it ends, rather than a slot of the reusable util/worker-pool: a hostile image's pixel buffers are
 * then freed at once, not when a pool worker next collects or idles out.
 *
 * The bound is on CPU time, not wall time: at low priority on a busy host the decode may wait long for a
 * CPU, and an image must never be omitted because the host is busy (issue 36: under a load of 14 on
 * 2 cores, 15 s of wall time passed before small images were decoded). Waiting costs no CPU time, so
 * only an image that makes the decoder work (size is bounded up front, so: a hostile one) reaches
 * the bound. Where a process's CPU time cannot be read (no /proc), a wall-clock bound of
 * IMAGE_DECODE_TIMEOUT_MS applies instead, and only to images over SMALL_IMAGE_PIXELS.
 *
 * jimp here is jimp's own parts, put together as the `jimp` package puts them (its createJimp with
 * the same format codecs), less what read never uses: @jimp/core with the PNG, JPEG, GIF and BMP
 * codecs (bmp and msBmp, as jimp lists them) and the resize plugin; not TIFF (image-detect.ts never
 * sends one here) nor jimp's other 17 plugins. The decode, resize and encode code is the same.
 */
import type { ChildProcess } from "node:child_process";
import {
  AbortError,
  processCpuMs,
  refWorkerProcess,
  Slots,
  startWorkerProcess,
  workerModule,
} from "../util/index.js";
import { imageDimensions } from "./image-size.js";

/** Largest side sent to the model, in pixels (Pi's). */
export const MAX_IMAGE_SIDE = 2000;
/** Largest image sent, as base64 characters (Pi's 4.5 MB, below providers' 5 MB). */
const MAX_IMAGE_BASE64 = 4.5 * 1024 * 1024;
/** Largest image decoded (width × height), so decoding allocates at most ~100 MB of pixels. */
export const MAX_DECODE_PIXELS = 25_000_000;
/**
 * CPU time a decode and re-encode may use before it is abandoned, in ms: user plus system time of
 * all the decode process's threads, its start-up included (util/worker-process.ts processCpuMs).
 * Time spent waiting for a CPU does not count.
 */
export const IMAGE_DECODE_CPU_MS = 15_000;
/** Where CPU time cannot be read (no /proc): the wall-clock bound of a decode over SMALL_IMAGE_PIXELS, in ms. */
export const IMAGE_DECODE_TIMEOUT_MS = 15_000;
/** Images up to this many pixels (2000 × 2000, the largest sent unscaled) never get a wall-clock bound. */
const SMALL_IMAGE_PIXELS = 4_000_000;
/** How often a running decode's CPU time is read, in ms. */
const CPU_CHECK_EVERY_MS = 100;
/** Old-generation heap cap of a decode's process, MiB (the pixels are outside it). */
const IMAGE_DECODE_HEAP_MB = 512;
/** Most images decoded at once in the process (each may hold a few copies of MAX_DECODE_PIXELS × 4 bytes). */
export const IMAGE_DECODE_SLOTS = 2;

/** The process's decode slots (IMAGE_DECODE_SLOTS); exported for tests. */
export const imageDecodeSlots = new Slots(IMAGE_DECODE_SLOTS);

/** What to send: the image as it is, a re-encoded smaller one, or nothing (with the reason). */
export type FittedImage =
  | { kind: "original"; width: number; height: number }
  | {
      kind: "resized";
      data: Buffer;
      mimeType: string;
      width: number;
      height: number;
      originalWidth: number;
      originalHeight: number;
    }
  | {
      kind: "omitted";
      /** "cpu-limit": IMAGE_DECODE_CPU_MS used; "timeout": IMAGE_DECODE_TIMEOUT_MS passed (only where CPU time cannot be read). */
      reason: "unreadable" | "too-large" | "too-many-pixels" | "cpu-limit" | "timeout";
      pixels?: number;
    };

/** One decode for the worker (image-decode-worker.ts): the file's bytes, its type and the bounds (the constants above). */
export interface DecodeJob {
  data: Uint8Array;
  mimeType: string;
  maxPixels: number;
  maxSide: number;
  maxBase64: number;
}

/** Bounds of one decode; the defaults are the module's constants. */
export interface FitImageOptions {
  signal?: AbortSignal;
  /** CPU time the decode may use, in ms. @default IMAGE_DECODE_CPU_MS */
  cpuLimitMs?: number;
}

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;
/** The decode worker's module (image-decode-worker.ts), started once per decode. */
const DECODE_WORKER = workerModule(import.meta.url, "image-decode-worker");

/**
 * Decodes in `child` (a process started for this decode alone): resolves its answer, or "cpu-limit"
 * once it has used `cpuLimitMs` of CPU time, or "unreadable" when it dies. Does not kill it.
 */
function decodeInWorker(
  child: ChildProcess,
  data: Buffer,
  mimeType: string,
  pixels: number,
  options: FitImageOptions,
): Promise<FittedImage> {
  return new Promise((resolve, reject) => {
    const { signal } = options;
    const cpuLimitMs = options.cpuLimitMs ?? IMAGE_DECODE_CPU_MS;
    refWorkerProcess(child);
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(cpuCheck);
      clearTimeout(wallTimer);
      signal?.removeEventListener("abort", onAbort);
      outcome();
    };
    const onAbort = () => finish(() => reject(signal?.reason ?? new AbortError()));
    const cpuMs = () => (child.pid === undefined ? undefined : processCpuMs(child.pid));
    const measured = cpuMs() !== undefined;
    const cpuCheck = setInterval(() => {
      const used = cpuMs();
      if (used !== undefined && used >= cpuLimitMs)
        finish(() => resolve({ kind: "omitted", reason: "cpu-limit" }));
    }, CPU_CHECK_EVERY_MS);
    // No /proc: a wall-clock bound, and only for a large image (a small one's size bounds its work).
    const wallTimer =
      !measured && pixels > SMALL_IMAGE_PIXELS
        ? setTimeout(
            () => finish(() => resolve({ kind: "omitted", reason: "timeout" })),
            IMAGE_DECODE_TIMEOUT_MS,
          )
        : undefined;
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) return onAbort();
    child.once("message", (reply: { ok: boolean; value?: FittedImage }) => {
      const message =
        reply.ok && reply.value ? reply.value : ({ kind: "omitted", reason: "unreadable" } as const);
      const fitted = message.kind === "resized" ? { ...message, data: Buffer.from(message.data) } : message;
      finish(() => resolve(fitted));
    });
    child.once("error", () => finish(() => resolve({ kind: "omitted", reason: "unreadable" })));
    child.once("exit", () => finish(() => resolve({ kind: "omitted", reason: "unreadable" })));
    try {
      const job: DecodeJob = {
        data,
        mimeType,
        maxPixels: MAX_DECODE_PIXELS,
        maxSide: MAX_IMAGE_SIDE,
        maxBase64: MAX_IMAGE_BASE64,
      };
      child.send(job);
    } catch {
      finish(() => resolve({ kind: "omitted", reason: "unreadable" }));
    }
  });
}

/**
 * Decides how an image of type `mimeType` (whole file in `data`) is sent to the model. Never throws
 * for bad image data (that is an "omitted" result); rejects only when `signal` aborts (also while
 * waiting for a decode slot, imageDecodeSlots).
 */
export function fitImage(
  data: Buffer,
  mimeType: string,
  options: FitImageOptions = {},
): Promise<FittedImage> {
  return fitImageFrom(async () => data, mimeType, options).then((r) => r.fitted);
}

/**
 * fitImage for bytes loaded by `load` (the whole file) once a decode slot is free, so calls waiting
 * for a slot hold no image bytes (a batch of many image reads would otherwise hold up to 20 MiB
 * each). The slot is taken synchronously when one is free. The decode's process starts with the
 * load (its start-up overlaps the read) and is killed when the call ends. Rejects when `load`
 * rejects, or AbortError when `signal` aborts.
 */
export async function fitImageFrom(
  load: () => Promise<Buffer>,
  mimeType: string,
  options: FitImageOptions = {},
): Promise<{ data: Buffer; fitted: FittedImage }> {
  const release = await imageDecodeSlots.acquire(options.signal);
  // A process of its own, every thread at nice 19 (util/worker-process.ts): a decode, its garbage
  // collection included, never takes a core from the event loop; killed when the call ends.
  const child =
    mimeType === "image/webp" ? undefined : startWorkerProcess(DECODE_WORKER, IMAGE_DECODE_HEAP_MB).child;
  try {
    const data = await load();
    return { data, fitted: await fitLoaded(child, data, mimeType, options) };
  } finally {
    child?.kill("SIGKILL");
    release();
  }
}

async function fitLoaded(
  child: ChildProcess | undefined,
  data: Buffer,
  mimeType: string,
  options: FitImageOptions,
): Promise<FittedImage> {
  const size = imageDimensions(data, mimeType);
  if (!size || size.width < 1 || size.height < 1) return { kind: "omitted", reason: "unreadable" };
  const pixels = size.width * size.height;
  if (pixels > MAX_DECODE_PIXELS) return { kind: "omitted", reason: "too-many-pixels", pixels };
  if (mimeType === "image/webp" || child === undefined) {
    // jimp has no WebP decoder: a WebP within the limits goes as it is, a larger one is omitted.
    const fits =
      size.width <= MAX_IMAGE_SIDE &&
      size.height <= MAX_IMAGE_SIDE &&
      base64Length(data.length) < MAX_IMAGE_BASE64;
    return fits ? { kind: "original", ...size } : { kind: "omitted", reason: "too-large" };
  }
  return decodeInWorker(child, data, mimeType, pixels, options);
}
