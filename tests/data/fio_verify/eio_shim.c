/* LD_PRELOAD shim: reads of the file $EIO_PATH that overlap
   [$EIO_OFFSET, $EIO_OFFSET + $EIO_LENGTH) fail with EIO, as an unreadable (uncorrectable)
   range of a drive does. Covers fio's psync engine (pread) and libaio engine (the
   completions io_getevents returns). Test scaffolding only; not part of ssdlab. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static int failing(int fd, long long offset, unsigned long long count)
{
	const char *path = getenv("EIO_PATH"), *o = getenv("EIO_OFFSET"), *l = getenv("EIO_LENGTH");
	char link[64], target[PATH_MAX];
	long long start, end;
	ssize_t n;

	if (!path || !o || !l)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = 0;
	if (strcmp(target, path))
		return 0;
	start = strtoll(o, NULL, 10);
	end = start + strtoll(l, NULL, 10);
	return offset < end && offset + (long long)count > start;
}

ssize_t pread64(int fd, void *buf, size_t count, off_t offset)
{
	static ssize_t (*real)(int, void *, size_t, off_t);

	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
	if (failing(fd, offset, count)) {
		errno = EIO;
		return -1;
	}
	return real(fd, buf, count, offset);
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
	return pread64(fd, buf, count, offset);
}

/* libaio's io_context_t is an opaque pointer; its iocb and io_event have the kernel's layout. */
int io_getevents(void *ctx, long min_nr, long nr, struct io_event *events, struct timespec *timeout)
{
	static int (*real)(void *, long, long, struct io_event *, struct timespec *);
	int got, i;

	if (!real)
		real = (int (*)(void *, long, long, struct io_event *, struct timespec *))
			dlsym(RTLD_NEXT, "io_getevents");
	got = real(ctx, min_nr, nr, events, timeout);
	for (i = 0; i < got; i++) {
		struct iocb *cb = (struct iocb *)(unsigned long)events[i].obj;

		if (cb->aio_lio_opcode == IOCB_CMD_PREAD &&
		    failing(cb->aio_fildes, cb->aio_offset, cb->aio_nbytes))
			events[i].res = -EIO;
	}
	return got;
}
