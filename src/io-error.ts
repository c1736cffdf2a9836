// What a failed file operation says to a user, shared by every reader and writer of files.

/** A system error in words, with its code: "no such file or directory (ENOENT)". */
export function describeIoError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ENOENT: "no such file or directory",
    EACCES: "permission denied",
    EISDIR: "it is a directory",
    ENOTDIR: "a parent of it is not a directory",
    EEXIST: "it already exists",
    ENOSPC: "no space left on the device",
    EROFS: "the file system is read-only",
    ENXIO: "no such device or address",
  };
  return code === undefined ? String((err as Error).message ?? err) : `${words[code] ?? "system error"} (${code})`;
}
