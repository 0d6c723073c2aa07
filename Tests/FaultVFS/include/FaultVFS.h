// A fault-injecting SQLite VFS for GarageLite's tests (test-only), in the style of SQLite's own
// test6.c (crash simulation) and test_vfs.c (I/O errors).
//
// `faultvfs_install` registers "garage-fault" as the process's default VFS, wrapping the one
// that was the default. Every file goes through it; only the files whose path starts with the
// armed directory (`faultvfs_arm`) are watched. For those it:
//  - logs every write, truncation, sync and deletion, with the data written, so that
//    `faultvfs_crash_image` can rebuild the files as a power cut at any point of the log would
//    have left them: each file's content at its last sync, plus, optionally, a random subset of
//    the writes after it (some torn at a 512-byte boundary);
//  - fails the Nth call of the chosen kinds (write, sync, truncate, read) with an SQLite error
//    code, once or for every call after it.
// One scenario at a time: the state is global, behind a mutex.
#ifndef GARAGE_FAULT_VFS_H
#define GARAGE_FAULT_VFS_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    FAULTVFS_WRITE = 1,
    FAULTVFS_SYNC = 2,
    FAULTVFS_TRUNCATE = 4,
    FAULTVFS_READ = 8,
};

/// Registers the VFS as the default (once); returns SQLITE_OK or an SQLite error code.
int faultvfs_install(void);

/// Watches the files under `directory` (a path prefix): clears the log, the faults and the counters.
void faultvfs_arm(const char *directory);
/// Watches nothing any more; the log stays for `faultvfs_crash_image`.
void faultvfs_disarm(void);

/// From the `nth` watched call (1-based, counted from now) of `kinds`: return `code` instead of
/// doing it; once (`sticky` == 0) or for every later call too. `nth` 0 injects nothing.
void faultvfs_fail(int kinds, long nth, int code, int sticky);
/// No more faults (the counters stay).
void faultvfs_clear_faults(void);
/// Watched calls of `kinds` made since the directory was armed.
long faultvfs_calls(int kinds);
/// Faults injected since the directory was armed.
long faultvfs_faults(void);

/// Makes every sync of a watched file a no-op for the crash images (it is not logged): a
/// broken file system, to prove that the power-cut tests see what it loses.
void faultvfs_ignore_syncs(int ignore);
/// The number of events logged so far: a point of the log a crash image can be cut at.
long faultvfs_log_position(void);
/// The position of the last sync logged at or before `position` (0 when none).
long faultvfs_last_sync(long position);

/// Writes into `outDirectory` (which must exist) the watched files as a power cut after the
/// first `position` events would have left them: each at its last sync, plus, when `torn` is
/// not 0, a random subset (seeded by `seed`) of the writes made after that sync, some cut at a
/// 512-byte boundary. Files are named as in the watched directory; empty or deleted ones are
/// left out. Returns the number of files written, or -1 when one could not be written.
int faultvfs_crash_image(long position, unsigned int seed, int torn, const char *outDirectory);

#ifdef __cplusplus
}
#endif

#endif
