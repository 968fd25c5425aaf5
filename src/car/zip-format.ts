// The few numbers of the zip format that both reading and writing a CAR use (docs/architecture.md §14).

export const UTF8_FLAG = 0x800;
export const ENCRYPTED_FLAGS = 0x1 | 0x40; // traditional and strong encryption
export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
export const LOCAL_HEADER_SIGNATURE = 0x04034b50;
export const LOCAL_HEADER_SIZE = 30;

/** Entries up to this size are inflated and deflated synchronously: a thread-pool round trip costs more. */
export const SMALL_ENTRY = 64 * 1024;
