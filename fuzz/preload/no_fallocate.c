/*
 * Preloaded into the `recovery` fuzz target by scripts/fuzz (AFL_PRELOAD): fallocate fails with
 * EOPNOTSUPP, which RocksDB handles by not preallocating.
 *
 * Why: the target opens a RocksDB index for every input, in a tmpfs scratch directory. RocksDB
 * preallocates its write-ahead log (about 70 MB with the default write buffer), and on tmpfs
 * fallocate zeroes every page: ~10 ms a call, three quarters of an execution. The log's files
 * and the checks made on them are the same without it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>

int fallocate(int fd, int mode, off_t offset, off_t len) {
    (void)fd, (void)mode, (void)offset, (void)len;
    errno = EOPNOTSUPP;
    return -1;
}

int fallocate64(int fd, int mode, off_t offset, off_t len) {
    return fallocate(fd, mode, offset, len);
}

int posix_fallocate(int fd, off_t offset, off_t len) {
    (void)fd, (void)offset, (void)len;
    return EOPNOTSUPP;
}

int posix_fallocate64(int fd, off_t offset, off_t len) {
    return posix_fallocate(fd, offset, len);
}
