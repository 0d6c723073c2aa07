// The fault-injecting VFS of GarageLite's tests: see include/FaultVFS.h.
#include "FaultVFS.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - State

enum EventKind { EVENT_WRITE, EVENT_TRUNCATE, EVENT_SYNC, EVENT_DELETE };

typedef struct Event {
    enum EventKind kind;
    int file;                 // index in `names`
    sqlite3_int64 offset;     // write: where; truncate: the new size
    int length;               // write: how many bytes of `data`
    unsigned char *data;      // write: a copy of what was written
} Event;

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *realVFS;
static char *armedDirectory;  // NULL: nothing watched
static size_t armedLength;

static Event *events;
static long eventCount, eventCapacity;
static char **names;          // the watched files' paths, by index
static int nameCount, nameCapacity;

static int faultKinds;
static long faultNth;
static int faultCode, faultSticky;
static long callCounts[4];    // per kind bit: write, sync, truncate, read
static long matchingCalls;    // watched calls of `faultKinds` since the faults were set
static long faultsInjected;
static int ignoreSyncs;

static void fail_out_of_memory(void) {
    fprintf(stderr, "FaultVFS: out of memory\n");
    abort();
}

/// The index of `path` among the watched files, added when new. Under the mutex.
static int name_index(const char *path) {
    for (int i = 0; i < nameCount; i++) {
        if (strcmp(names[i], path) == 0) return i;
    }
    if (nameCount == nameCapacity) {
        nameCapacity = nameCapacity ? nameCapacity * 2 : 8;
        names = realloc(names, sizeof(char *) * (size_t)nameCapacity);
        if (!names) fail_out_of_memory();
    }
    names[nameCount] = strdup(path);
    if (!names[nameCount]) fail_out_of_memory();
    return nameCount++;
}

static int is_watched(const char *path) {
    return path && armedDirectory && strncmp(path, armedDirectory, armedLength) == 0;
}

/// Appends an event. Under the mutex.
static void log_event(enum EventKind kind, int file, sqlite3_int64 offset, const void *data, int length) {
    if (eventCount == eventCapacity) {
        eventCapacity = eventCapacity ? eventCapacity * 2 : 1024;
        events = realloc(events, sizeof(Event) * (size_t)eventCapacity);
        if (!events) fail_out_of_memory();
    }
    Event *event = &events[eventCount++];
    event->kind = kind;
    event->file = file;
    event->offset = offset;
    event->length = length;
    event->data = NULL;
    if (data && length > 0) {
        event->data = malloc((size_t)length);
        if (!event->data) fail_out_of_memory();
        memcpy(event->data, data, (size_t)length);
    }
}

static void clear_log(void) {
    for (long i = 0; i < eventCount; i++) free(events[i].data);
    free(events);
    events = NULL;
    eventCount = eventCapacity = 0;
    for (int i = 0; i < nameCount; i++) free(names[i]);
    free(names);
    names = NULL;
    nameCount = nameCapacity = 0;
}

static int kind_slot(int kind) {
    switch (kind) {
    case FAULTVFS_WRITE: return 0;
    case FAULTVFS_SYNC: return 1;
    case FAULTVFS_TRUNCATE: return 2;
    default: return 3;
    }
}

/// Counts a watched call of `kind`; returns the error to inject, or SQLITE_OK. Under the mutex.
static int count_call(int kind) {
    callCounts[kind_slot(kind)]++;
    if (!(faultKinds & kind) || faultNth <= 0) return SQLITE_OK;
    matchingCalls++;
    if (matchingCalls == faultNth || (faultSticky && matchingCalls > faultNth)) {
        faultsInjected++;
        return faultCode;
    }
    return SQLITE_OK;
}

// MARK: - Files

typedef struct FaultFile {
    sqlite3_file base;
    sqlite3_file *real;       // the wrapped file, right after this struct
    int watched;
    int index;                // in `names`, when watched
} FaultFile;

#define REAL(file) (((FaultFile *)(file))->real)
#define WATCHED(file) (((FaultFile *)(file))->watched)

static int fault_close(sqlite3_file *file) {
    int rc = REAL(file)->pMethods ? REAL(file)->pMethods->xClose(REAL(file)) : SQLITE_OK;
    file->pMethods = NULL;
    return rc;
}

static int fault_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    if (WATCHED(file)) {
        pthread_mutex_lock(&mutex);
        int rc = count_call(FAULTVFS_READ);
        pthread_mutex_unlock(&mutex);
        if (rc != SQLITE_OK) return rc;
    }
    return REAL(file)->pMethods->xRead(REAL(file), buffer, amount, offset);
}

static int fault_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    if (!WATCHED(file)) return REAL(file)->pMethods->xWrite(REAL(file), buffer, amount, offset);
    // Logged and written under the mutex, so that the log's order is the files' order.
    pthread_mutex_lock(&mutex);
    int rc = count_call(FAULTVFS_WRITE);
    if (rc == SQLITE_OK) {
        rc = REAL(file)->pMethods->xWrite(REAL(file), buffer, amount, offset);
        if (rc == SQLITE_OK) log_event(EVENT_WRITE, ((FaultFile *)file)->index, offset, buffer, amount);
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int fault_truncate(sqlite3_file *file, sqlite3_int64 size) {
    if (!WATCHED(file)) return REAL(file)->pMethods->xTruncate(REAL(file), size);
    pthread_mutex_lock(&mutex);
    int rc = count_call(FAULTVFS_TRUNCATE);
    if (rc == SQLITE_OK) {
        rc = REAL(file)->pMethods->xTruncate(REAL(file), size);
        if (rc == SQLITE_OK) log_event(EVENT_TRUNCATE, ((FaultFile *)file)->index, size, NULL, 0);
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int fault_sync(sqlite3_file *file, int flags) {
    if (!WATCHED(file)) return REAL(file)->pMethods->xSync(REAL(file), flags);
    pthread_mutex_lock(&mutex);
    int rc = count_call(FAULTVFS_SYNC);
    if (rc == SQLITE_OK) {
        rc = REAL(file)->pMethods->xSync(REAL(file), flags);
        if (rc == SQLITE_OK && !ignoreSyncs) log_event(EVENT_SYNC, ((FaultFile *)file)->index, 0, NULL, 0);
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int fault_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    return REAL(file)->pMethods->xFileSize(REAL(file), size);
}

static int fault_lock(sqlite3_file *file, int lock) {
    return REAL(file)->pMethods->xLock(REAL(file), lock);
}

static int fault_unlock(sqlite3_file *file, int lock) {
    return REAL(file)->pMethods->xUnlock(REAL(file), lock);
}

static int fault_check_reserved_lock(sqlite3_file *file, int *result) {
    return REAL(file)->pMethods->xCheckReservedLock(REAL(file), result);
}

static int fault_file_control(sqlite3_file *file, int op, void *argument) {
    return REAL(file)->pMethods->xFileControl(REAL(file), op, argument);
}

static int fault_sector_size(sqlite3_file *file) {
    return REAL(file)->pMethods->xSectorSize(REAL(file));
}

static int fault_device_characteristics(sqlite3_file *file) {
    return REAL(file)->pMethods->xDeviceCharacteristics(REAL(file));
}

static int fault_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **pointer) {
    return REAL(file)->pMethods->xShmMap(REAL(file), page, size, extend, pointer);
}

static int fault_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    return REAL(file)->pMethods->xShmLock(REAL(file), offset, n, flags);
}

static void fault_shm_barrier(sqlite3_file *file) {
    REAL(file)->pMethods->xShmBarrier(REAL(file));
}

static int fault_shm_unmap(sqlite3_file *file, int deleteFlag) {
    return REAL(file)->pMethods->xShmUnmap(REAL(file), deleteFlag);
}

static int fault_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    // Memory-mapped reads would bypass xRead's faults: none are offered.
    *pointer = NULL;
    (void)file; (void)offset; (void)amount;
    return SQLITE_OK;
}

static int fault_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    (void)file; (void)offset; (void)pointer;
    return SQLITE_OK;
}

static const sqlite3_io_methods faultMethods = {
    3,
    fault_close, fault_read, fault_write, fault_truncate, fault_sync, fault_file_size,
    fault_lock, fault_unlock, fault_check_reserved_lock, fault_file_control,
    fault_sector_size, fault_device_characteristics,
    fault_shm_map, fault_shm_lock, fault_shm_barrier, fault_shm_unmap,
    fault_fetch, fault_unfetch,
};

// MARK: - The VFS

static int fault_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    FaultFile *fault = (FaultFile *)file;
    fault->real = (sqlite3_file *)&fault[1];
    fault->watched = 0;
    fault->index = -1;
    int rc = realVFS->xOpen(realVFS, name, fault->real, flags, outFlags);
    if (fault->real->pMethods == NULL) {
        file->pMethods = NULL;
        return rc;
    }
    if (name) {
        pthread_mutex_lock(&mutex);
        if (is_watched(name)) {
            fault->watched = 1;
            fault->index = name_index(name);
        }
        pthread_mutex_unlock(&mutex);
    }
    file->pMethods = &faultMethods;
    return rc;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    pthread_mutex_lock(&mutex);
    int rc = realVFS->xDelete(realVFS, name, syncDirectory);
    if (rc == SQLITE_OK && is_watched(name)) log_event(EVENT_DELETE, name_index(name), 0, NULL, 0);
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return realVFS->xAccess(realVFS, name, flags, result);
}

static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return realVFS->xFullPathname(realVFS, name, size, out);
}

static void *fault_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return realVFS->xDlOpen(realVFS, name);
}

static void fault_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    realVFS->xDlError(realVFS, size, out);
}

static void (*fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return realVFS->xDlSym(realVFS, handle, symbol);
}

static void fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    realVFS->xDlClose(realVFS, handle);
}

static int fault_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xRandomness(realVFS, size, out);
}

static int fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return realVFS->xSleep(realVFS, microseconds);
}

static int fault_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return realVFS->xCurrentTime(realVFS, out);
}

static int fault_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xGetLastError ? realVFS->xGetLastError(realVFS, size, out) : 0;
}

static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return realVFS->xCurrentTimeInt64(realVFS, out);
}

static sqlite3_vfs faultVFS = {
    2, 0, 1024, NULL, "garage-fault", NULL,
    fault_open, fault_delete, fault_access, fault_full_pathname,
    fault_dl_open, fault_dl_error, fault_dl_sym, fault_dl_close,
    fault_randomness, fault_sleep, fault_current_time, fault_get_last_error,
    fault_current_time_int64,
    NULL, NULL, NULL,
};

int faultvfs_install(void) {
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    if (!realVFS) {
        sqlite3_vfs *current = sqlite3_vfs_find(NULL);
        if (!current || current->iVersion < 2) {
            rc = SQLITE_ERROR;
        } else {
            realVFS = current;
            faultVFS.szOsFile = (int)sizeof(FaultFile) + current->szOsFile;
            faultVFS.mxPathname = current->mxPathname;
            rc = sqlite3_vfs_register(&faultVFS, 1);
            if (rc != SQLITE_OK) realVFS = NULL;
        }
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

// MARK: - Scenarios

void faultvfs_arm(const char *directory) {
    pthread_mutex_lock(&mutex);
    free(armedDirectory);
    armedDirectory = strdup(directory);
    if (!armedDirectory) fail_out_of_memory();
    armedLength = strlen(directory);
    clear_log();
    faultKinds = 0;
    faultNth = 0;
    matchingCalls = 0;
    faultsInjected = 0;
    ignoreSyncs = 0;
    memset(callCounts, 0, sizeof(callCounts));
    pthread_mutex_unlock(&mutex);
}

void faultvfs_disarm(void) {
    pthread_mutex_lock(&mutex);
    free(armedDirectory);
    armedDirectory = NULL;
    armedLength = 0;
    faultKinds = 0;
    faultNth = 0;
    pthread_mutex_unlock(&mutex);
}

void faultvfs_fail(int kinds, long nth, int code, int sticky) {
    pthread_mutex_lock(&mutex);
    faultKinds = kinds;
    faultNth = nth;
    faultCode = code;
    faultSticky = sticky;
    matchingCalls = 0;
    pthread_mutex_unlock(&mutex);
}

void faultvfs_clear_faults(void) {
    pthread_mutex_lock(&mutex);
    faultKinds = 0;
    faultNth = 0;
    pthread_mutex_unlock(&mutex);
}

long faultvfs_calls(int kinds) {
    pthread_mutex_lock(&mutex);
    long total = 0;
    for (int bit = 0; bit < 4; bit++) {
        if (kinds & (1 << bit)) total += callCounts[bit];
    }
    pthread_mutex_unlock(&mutex);
    return total;
}

long faultvfs_faults(void) {
    pthread_mutex_lock(&mutex);
    long count = faultsInjected;
    pthread_mutex_unlock(&mutex);
    return count;
}

void faultvfs_ignore_syncs(int ignore) {
    pthread_mutex_lock(&mutex);
    ignoreSyncs = ignore;
    pthread_mutex_unlock(&mutex);
}

long faultvfs_log_position(void) {
    pthread_mutex_lock(&mutex);
    long position = eventCount;
    pthread_mutex_unlock(&mutex);
    return position;
}

long faultvfs_last_sync(long position) {
    pthread_mutex_lock(&mutex);
    long last = 0;
    if (position > eventCount) position = eventCount;
    for (long i = position; i > 0; i--) {
        if (events[i - 1].kind == EVENT_SYNC) { last = i; break; }
    }
    pthread_mutex_unlock(&mutex);
    return last;
}

// MARK: - Crash images

typedef struct Content {
    unsigned char *bytes;
    sqlite3_int64 size, capacity;
} Content;

static void content_write(Content *content, sqlite3_int64 offset, const unsigned char *data, sqlite3_int64 length) {
    sqlite3_int64 end = offset + length;
    if (end > content->capacity) {
        sqlite3_int64 capacity = content->capacity ? content->capacity : 4096;
        while (capacity < end) capacity *= 2;
        content->bytes = realloc(content->bytes, (size_t)capacity);
        if (!content->bytes) fail_out_of_memory();
        content->capacity = capacity;
    }
    if (offset > content->size) memset(content->bytes + content->size, 0, (size_t)(offset - content->size));
    memcpy(content->bytes + offset, data, (size_t)length);
    if (end > content->size) content->size = end;
}

static void content_copy(Content *to, const Content *from) {
    to->size = 0;
    if (from->size > 0) content_write(to, 0, from->bytes, from->size);
}

/// A small deterministic generator (xorshift32), so that an image is replayed from its seed.
static unsigned int next_random(unsigned int *state) {
    unsigned int x = *state ? *state : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

int faultvfs_crash_image(long position, unsigned int seed, int torn, const char *outDirectory) {
    pthread_mutex_lock(&mutex);
    if (position > eventCount) position = eventCount;
    int files = nameCount;
    Content *current = calloc((size_t)(files ? files : 1), sizeof(Content));
    Content *durable = calloc((size_t)(files ? files : 1), sizeof(Content));
    long *lastSync = calloc((size_t)(files ? files : 1), sizeof(long)); // index of the event after the file's last sync
    if (!current || !durable || !lastSync) fail_out_of_memory();
    for (long i = 0; i < position; i++) {
        Event *event = &events[i];
        Content *content = &current[event->file];
        switch (event->kind) {
        case EVENT_WRITE:
            content_write(content, event->offset, event->data, event->length);
            break;
        case EVENT_TRUNCATE:
            if (event->offset < content->size) content->size = event->offset;
            break;
        case EVENT_SYNC:
            content_copy(&durable[event->file], content);
            lastSync[event->file] = i + 1;
            break;
        case EVENT_DELETE:
            // A deletion is taken as durable at once (SQLite syncs the folder when it matters).
            content->size = 0;
            durable[event->file].size = 0;
            lastSync[event->file] = i + 1;
            break;
        }
    }
    // Each file as its last sync left it, then (torn) some of the writes made after it.
    unsigned int state = seed;
    for (long i = 0; torn && i < position; i++) {
        Event *event = &events[i];
        if (i < lastSync[event->file]) continue;
        Content *content = &durable[event->file];
        if (event->kind == EVENT_TRUNCATE) {
            if (next_random(&state) % 2 == 0 && event->offset < content->size) content->size = event->offset;
            continue;
        }
        if (event->kind != EVENT_WRITE) continue;
        unsigned int choice = next_random(&state) % 4;
        if (choice == 0) continue;                        // lost
        sqlite3_int64 length = event->length;
        if (choice == 1 && length > 512) {                 // torn at a sector boundary
            length = 512 * (sqlite3_int64)(1 + next_random(&state) % (unsigned int)(length / 512));
            if (length > event->length) length = event->length;
        }
        content_write(content, event->offset, event->data, length);
    }
    int written = 0;
    for (int f = 0; f < files && written >= 0; f++) {
        if (durable[f].size == 0) continue;
        const char *name = strrchr(names[f], '/');
        name = name ? name + 1 : names[f];
        size_t pathLength = strlen(outDirectory) + strlen(name) + 2;
        char *path = malloc(pathLength);
        if (!path) fail_out_of_memory();
        snprintf(path, pathLength, "%s/%s", outDirectory, name);
        FILE *out = fopen(path, "wb");
        if (!out || fwrite(durable[f].bytes, 1, (size_t)durable[f].size, out) != (size_t)durable[f].size) {
            written = -1;
        } else {
            written++;
        }
        if (out) fclose(out);
        free(path);
    }
    for (int f = 0; f < files; f++) {
        free(current[f].bytes);
        free(durable[f].bytes);
    }
    free(current);
    free(durable);
    free(lastSync);
    pthread_mutex_unlock(&mutex);
    return written;
}
