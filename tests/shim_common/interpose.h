/*
 * interpose.h - what the LD_PRELOAD shims (tests/nvme_shim, tests/ata_shim) share: making one
 * device path open /dev/null, tracking the fds so handed out, a fixed clock, and reading the
 * pages the answers come from.  Each shim keeps its protocol, in shim_ioctl(), and defines,
 * before including this file:
 *
 *   SHIM_NAME        the name its debug lines start with, e.g. "nvme_shim"
 *   SHIM_ENV_DEVICE  the variable naming the device path to fake
 *   SHIM_ENV_DIR     the variable naming the directory of pages
 *   SHIM_ENV_DEBUG   the variable that, if set, logs every command to stderr
 *   SHIM_ENV_TIME    the variable that, if set, is what time() returns (seconds since the epoch)
 *
 * Opening the device opens /dev/null instead: a real character device, so the tools' fstat()
 * checks ("is this a char or block device?") pass with no stat interposition.  The fd is
 * remembered: ioctl() on it goes to the shim's shim_ioctl(), all other calls to libc untouched.
 *
 * Built with the shim: gcc -shared -fPIC -O2 -I tests/shim_common -o X.so X.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 64

static int shim_fds[MAX_FDS]; /* fds handed out for the device; 0 = free slot (fd 0 is stdin) */

static int debug(void) { return getenv(SHIM_ENV_DEBUG) != NULL; }

static int is_device(const char *path)
{
	const char *dev = getenv(SHIM_ENV_DEVICE);
	return path && dev && *dev && strcmp(path, dev) == 0;
}

static int is_shim_fd(int fd)
{
	for (int i = 0; i < MAX_FDS; i++)
		if (fd > 0 && shim_fds[i] == fd)
			return 1;
	return 0;
}

static void remember_fd(int fd)
{
	for (int i = 0; i < MAX_FDS; i++)
		if (shim_fds[i] == 0) {
			shim_fds[i] = fd;
			return;
		}
}

static void forget_fd(int fd)
{
	for (int i = 0; i < MAX_FDS; i++)
		if (shim_fds[i] == fd)
			shim_fds[i] = 0;
}

/* the libc function this library hides, looked up once */
#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/*
 * open /dev/null in place of the device; access mode and creation flags do not matter for it
 * (nvme-cli opens O_RDONLY or O_RDWR, smartctl a SCSI node O_RDONLY | O_NONBLOCK)
 */
static int open_fake(int flags)
{
	REAL(open);
	int fd = real_open("/dev/null", O_RDWR | (flags & O_CLOEXEC));
	if (fd >= 0)
		remember_fd(fd);
	if (debug())
		fprintf(stderr, SHIM_NAME ": open %s -> fd %d\n", getenv(SHIM_ENV_DEVICE), fd);
	return fd;
}

/* open(2) and friends take the mode only with O_CREAT/O_TMPFILE; read it the way libc does */
#define MODE_ARG(flags, mode) \
	mode_t mode = 0; \
	if ((flags) & (O_CREAT | O_TMPFILE)) { \
		va_list ap; \
		va_start(ap, flags); \
		mode = va_arg(ap, mode_t); \
		va_end(ap); \
	}

int open(const char *path, int flags, ...)
{
	REAL(open);
	MODE_ARG(flags, mode);
	return is_device(path) ? open_fake(flags) : real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	REAL(open64);
	MODE_ARG(flags, mode);
	return is_device(path) ? open_fake(flags) : real_open64(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(openat);
	MODE_ARG(flags, mode);
	return is_device(path) ? open_fake(flags) : real_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(openat64);
	MODE_ARG(flags, mode);
	return is_device(path) ? open_fake(flags) : real_openat64(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE builds call these instead of open() */
int __open_2(const char *path, int flags)
{
	REAL(__open_2);
	return is_device(path) ? open_fake(flags) : real___open_2(path, flags);
}

int __open64_2(const char *path, int flags)
{
	REAL(__open64_2);
	return is_device(path) ? open_fake(flags) : real___open64_2(path, flags);
}

/* a closed fd number is reused by the next open(), which must not become the device */
int close(int fd)
{
	REAL(close);
	forget_fd(fd);
	return real_close(fd);
}

/* a fixed clock for reproducible recordings (SHIM_ENV_TIME), else the real one */
time_t time(time_t *t)
{
	REAL(time);
	const char *fixed = getenv(SHIM_ENV_TIME);
	if (!fixed || !*fixed)
		return real_time(t);
	time_t now = (time_t)strtoll(fixed, NULL, 10);
	if (t)
		*t = now;
	return now;
}

/* what the shim answers to ioctl() on the device's fd; each shim defines it */
static int shim_ioctl(unsigned long request, void *arg);

int ioctl(int fd, unsigned long request, ...)
{
	REAL(ioctl);
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return is_shim_fd(fd) ? shim_ioctl(request, arg) : real_ioctl(fd, request, arg);
}

/* the path of page `name`: SHIM_ENV_DIR/name, or ./name when the variable is unset */
static void page_path(char *path, size_t size, const char *name)
{
	const char *dir = getenv(SHIM_ENV_DIR);
	snprintf(path, size, "%s/%s", dir ? dir : ".", name);
}

/*
 * Copy `len` bytes of page `name` from `offset` into buf, zero-filling past its end.  Returns
 * how many bytes the file had there (0 past its end), or -1 if it does not exist.  Files are
 * read again for every command, so a test may swap a page between two reads.
 */
static long read_page(const char *name, uint64_t offset, void *buf, uint32_t len)
{
	char path[PATH_MAX];
	page_path(path, sizeof(path), name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	memset(buf, 0, len);
	size_t got = 0;
	if (fseek(f, (long)offset, SEEK_SET) == 0)
		got = fread(buf, 1, len, f);
	fclose(f);
	return (long)got;
}
