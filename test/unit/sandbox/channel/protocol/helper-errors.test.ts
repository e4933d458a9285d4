/**
 * The table from warden-helper's errno names to warden errors (messages.ts errorFromHelper) and
 * the path bounds every sandbox file operation checks first (io-contract.ts containerPath): where
 * the caller's path is at fault the error is a client one (4xx in `warden serve`), never
 * SANDBOX_ERROR (issue 37: a 300-byte name and a link through /proc/1/root answered 500).
 */
import { describe, expect, it } from "vitest";
import { HTTP_STATUS } from "../../../../../src/errors.js";
import { errorFromHelper } from "../../../../../src/sandbox/channel/protocol/messages.js";
import {
  containerPath,
  containerWritePath,
  NAME_MAX_BYTES,
  PATH_MAX_BYTES,
} from "../../../../../src/sandbox/io-contract.js";

const mapped = (errno: string, message: string) => {
  const err = errorFromHelper({ errno, message }, "resolving", "/workspace/p");
  return { code: err.code, status: HTTP_STATUS[err.code], message: err.message };
};

describe("warden-helper errors", () => {
  it("a permission the sandbox refuses (EACCES, EROFS) is PERMISSION_DENIED, 403", () => {
    expect(mapped("EACCES", "readlink /proc/1/root: permission denied")).toEqual({
      code: "PERMISSION_DENIED",
      status: 403,
      message:
        "resolving /workspace/p failed in the sandbox: readlink /proc/1/root: permission denied (EACCES).",
    });
    expect(mapped("EROFS", "open /workspace/p: read-only file system").code).toBe("PERMISSION_DENIED");
  });

  it("a symlink loop, a too-long name and a file where a parent directory should be are INVALID_ARGUMENT, 400", () => {
    expect(mapped("ELOOP", "realpath /workspace/p: too many levels of symbolic links")).toEqual({
      code: "INVALID_ARGUMENT",
      status: 400,
      message:
        "resolving /workspace/p failed in the sandbox: realpath /workspace/p: too many levels of symbolic links (ELOOP).",
    });
    expect(mapped("ENAMETOOLONG", "lstat /workspace/p: file name too long").status).toBe(400);
    expect(mapped("EEXIST", "mkdir /workspace/f/: file exists")).toEqual({
      code: "INVALID_ARGUMENT",
      status: 400,
      message:
        "resolving /workspace/p failed in the sandbox: mkdir /workspace/f/: file exists (EEXIST): a parent on the path exists and is not a directory; name a path whose parents are directories.",
    });
  });

  it("the sandbox's own failures stay SANDBOX_ERROR, 500", () => {
    expect(mapped("EIO", "read: input/output error").code).toBe("SANDBOX_ERROR");
    expect(mapped("ENOSPC", "write: no space left").status).toBe(500);
  });
});

describe("containerPath bounds", () => {
  it("refuses a name over NAME_MAX (255 bytes), naming the limit", () => {
    expect(containerPath("a".repeat(NAME_MAX_BYTES))).toBe(`/workspace/${"a".repeat(255)}`);
    expect(() => containerPath(`dir/${"a".repeat(300)}`)).toThrow(
      "path has a name of 300 bytes ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…'), over the 255-byte limit of a file name (NAME_MAX); use a shorter name.",
    );
    // Bytes, not characters: 128 two-byte characters are 256 bytes.
    expect(() => containerPath("é".repeat(128))).toThrow("a name of 256 bytes");
  });

  it("refuses a resolved path over PATH_MAX (4095 bytes), naming the limit", () => {
    const fits = `/workspace/${"ab/".repeat(1361)}x`;
    expect(Buffer.byteLength(fits)).toBe(4095);
    expect(containerPath(fits)).toBe(fits);
    expect(() => containerPath(`${fits}y`)).toThrow(
      `path is 4096 bytes once resolved, over the ${PATH_MAX_BYTES}-byte limit of a path (PATH_MAX); use a shorter path.`,
    );
  });

  it("bounds a file to write 25 bytes lower (230, 4070), for the helper's temporary name beside it", () => {
    expect(containerWritePath(`${"d".repeat(255)}/${"n".repeat(230)}`)).toBe(
      `/workspace/${"d".repeat(255)}/${"n".repeat(230)}`,
    );
    expect(() => containerWritePath("n".repeat(231))).toThrow(
      "over the 230-byte limit of a file name (NAME_MAX less the 25 bytes of the temporary name a file is written under)",
    );
    expect(() => containerWritePath(`/workspace/${"ab/".repeat(1352)}xyzw`)).toThrow(
      "path is 4071 bytes once resolved, over the 4070-byte limit of a path (PATH_MAX less the 25 bytes",
    );
  });
});
