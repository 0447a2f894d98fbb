/*
 * nvme_shim.c - an LD_PRELOAD library that turns one device path into a fake NVMe controller.
 *
 * Why: ssdlab parses what nvme-cli and smartctl print.  To test those parsers against the real
 * programs' output (not hand-written imitations) without a real drive, this library sits under
 * the real, unmodified binaries and answers their NVMe admin commands from files.
 *
 *   NVME_SHIM_DEVICE  the path the tool is given, e.g. /dev/nvme0 (a controller node)
 *   NVME_SHIM_DIR     a directory of pages (tests/nvme_shim/pages.py writes them):
 *     id-ctrl.bin       Identify Controller (opcode 0x06, CNS 1), 4096 bytes
 *     id-ns.bin         Identify Namespace (CNS 0); if absent the drive "has no namespace"
 *     smart-log.bin     Get Log Page 0x02 (SMART / Health Information), 512 bytes
 *     log-0xNN.bin      any other log page NN; 0x01 (error) and 0x03 (firmware slot) are
 *                       mandatory, so without a file they read as zeros, other pages fail
 *     feature-0xNN      Get Features FID NN: the completion dword, as a hex number in text.
 *                       Set Features FID NN (only for a feature that has this file) writes its
 *                       new value here, so a later Get Features sees it; with Save (SV) set it
 *                       also writes feature-0xNN.saved, so a test can tell a persistent change
 *     feature-0xNN.bin  Get Features FID NN: the data buffer (e.g. 0x0c, the APST table)
 *     fail-0xOP         if present, every admin command of opcode OP completes with the NVMe
 *                       status this file holds as text (e.g. "0x4002"), and changes nothing
 *     log-0x81.bin      the Sanitize Status log; a Sanitize command (opcode 0x84) whose action
 *                       Identify Controller's SANICAP allows rewrites it as "in progress"
 *     sanitize-polls    how many reads of the sanitize log still say "in progress" after a
 *                       Sanitize command (text; absent: 0, the sanitize completes at once)
 *     sanitize-result   the status the sanitize ends with: 1 completed (the default), 3 failed
 *     sanitize-pending  the shim's own count of the in-progress reads left (while one runs)
 *   NVME_SHIM_DEBUG   if set, every command is logged to stderr
 *   NVME_SHIM_TIME    if set, time() returns this many seconds since the epoch, so that what
 *                     smartctl prints as "local_time" is the same on every re-recording
 *
 * Opening NVME_SHIM_DEVICE opens /dev/null instead (tests/shim_common/interpose.h, shared with
 * the ATA shim, has how and why); ioctl() on that fd is answered here.  Files are read again for
 * every command, so a test may swap smart-log.bin between two reads.
 *
 * A command the pages do not cover completes with NVMe status "Invalid Field in Command" (with
 * Do Not Retry), which is what a real drive answers for a log page or feature it lacks; the tools
 * then behave as they would on such a drive.  Like the kernel, the controller node answers
 * NVME_IOCTL_ID with ENOTTY (only namespace nodes have an id), and tools fall back to the
 * broadcast namespace id.
 *
 * Build: gcc -shared -fPIC -O2 -I ../shim_common -o nvme_shim.so nvme_shim.c -ldl
 */
#define SHIM_NAME "nvme_shim"
#define SHIM_ENV_DEVICE "NVME_SHIM_DEVICE"
#define SHIM_ENV_DIR "NVME_SHIM_DIR"
#define SHIM_ENV_DEBUG "NVME_SHIM_DEBUG"
#define SHIM_ENV_TIME "NVME_SHIM_TIME"
#include "interpose.h"

#include <stddef.h>
#include <linux/nvme_ioctl.h>

#define STATUS_INVALID_FIELD 0x4002 /* DNR | generic status 0x02 */
#define STATUS_INVALID_OPCODE 0x4001 /* DNR | generic status 0x01 */

#define SANITIZE_LOG "log-0x81.bin"
#define SANITIZE_LOG_BYTES 512
#define SANITIZE_PENDING "sanitize-pending" /* reads of the log left before it completes */
#define SSTAT_COMPLETED 1
#define SSTAT_IN_PROGRESS 2
#define SSTAT_GLOBAL_DATA_ERASED (1u << 8)
#define SANICAP_OFFSET 328 /* in Identify Controller */

/* write `len` bytes of buf as page `name` (created or replaced); -1 on failure */
static int write_page(const char *name, const void *buf, size_t len)
{
	char path[PATH_MAX];
	page_path(path, sizeof(path), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t put = fwrite(buf, 1, len, f);
	return fclose(f) == 0 && put == len ? 0 : -1;
}

/* a small number kept as text in page `name`; `fallback` when the file is absent */
static unsigned long read_number(const char *name, unsigned long fallback)
{
	char text[64] = "";
	if (read_page(name, 0, text, sizeof(text) - 1) < 0)
		return fallback;
	return strtoul(text, NULL, 0);
}

static void write_number(const char *name, unsigned long value)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%#lx\n", value);
	write_page(name, text, (size_t)n);
}

/* the status file fail-0xOP asks every command of opcode `opcode` to complete with; 0: none */
static int forced_status(unsigned opcode)
{
	char name[32];
	snprintf(name, sizeof(name), "fail-0x%02x", opcode);
	return (int)read_number(name, 0);
}

/* SSTAT (bytes 3:2) and SCDW10 (bytes 7:4) of the sanitize log; progress (SPROG) 0 or done */
static void write_sanitize_log(unsigned sstat, uint32_t cdw10)
{
	unsigned char log[SANITIZE_LOG_BYTES];
	if (read_page(SANITIZE_LOG, 0, log, sizeof(log)) < 0)
		memset(log, 0, sizeof(log));
	unsigned sprog = (sstat & 7) == SSTAT_IN_PROGRESS ? 0 : 0xffff;
	log[0] = sprog & 0xff;
	log[1] = sprog >> 8;
	log[2] = sstat & 0xff;
	log[3] = sstat >> 8;
	memcpy(log + 4, &cdw10, 4);
	write_page(SANITIZE_LOG, log, sizeof(log));
}

/* Sanitize: the action (CDW10 bits 2:0) must be one SANICAP allows: 2 block erase (bit 1),
 * 3 overwrite (bit 2), 4 crypto erase (bit 0) */
static int sanitize(uint32_t cdw10)
{
	static const unsigned sanicap_bit[8] = {[2] = 1u << 1, [3] = 1u << 2, [4] = 1u << 0};
	uint32_t sanicap = 0;
	unsigned action = cdw10 & 7;
	if (read_page("id-ctrl.bin", SANICAP_OFFSET, &sanicap, sizeof(sanicap)) < 0 ||
	    !(sanicap & sanicap_bit[action]))
		return STATUS_INVALID_FIELD;
	write_sanitize_log(SSTAT_IN_PROGRESS, cdw10);
	write_number(SANITIZE_PENDING, read_number("sanitize-polls", 0));
	return 0;
}

/* before a read of the sanitize log: one in-progress read fewer, and the end when none is left */
static void sanitize_log_read(void)
{
	unsigned long left = read_number(SANITIZE_PENDING, (unsigned long)-1);
	if (left == (unsigned long)-1)
		return; /* no sanitize under way */
	if (left > 0) {
		write_number(SANITIZE_PENDING, left - 1);
		return;
	}
	char path[PATH_MAX];
	page_path(path, sizeof(path), SANITIZE_PENDING);
	unlink(path);
	uint32_t cdw10 = 0;
	read_page(SANITIZE_LOG, 4, &cdw10, sizeof(cdw10));
	unsigned result = (unsigned)read_number("sanitize-result", SSTAT_COMPLETED);
	write_sanitize_log(result == SSTAT_COMPLETED ? result | SSTAT_GLOBAL_DATA_ERASED : result, cdw10);
}

/* a feature's completion dword: feature-0xNN holds it as text ("0x1f", "357", ...) */
static int read_feature_dword(unsigned fid, uint32_t *value)
{
	char name[32], text[64] = "";
	snprintf(name, sizeof(name), "feature-0x%02x", fid);
	if (read_page(name, 0, text, sizeof(text) - 1) < 0)
		return -1;
	*value = (uint32_t)strtoul(text, NULL, 0);
	return 0;
}

/*
 * One admin command.  Returns the NVMe status (0 = success) as the kernel's ioctl does, and
 * stores the completion dword 0 in *result.
 */
static int admin_command(struct nvme_passthru_cmd64 *c, uint64_t *result)
{
	void *buf = (void *)(uintptr_t)c->addr;
	uint32_t len = c->data_len;
	char name[32];

	*result = 0;
	int forced = forced_status(c->opcode);
	if (forced)
		return forced;
	switch (c->opcode) {
	case 0x06: { /* Identify: CNS in CDW10 bits 7:0 */
		unsigned cns = c->cdw10 & 0xff;
		if (cns == 0x01)
			return read_page("id-ctrl.bin", 0, buf, len) < 0 ? STATUS_INVALID_FIELD : 0;
		if (cns == 0x00) /* namespace 1 is the only one; the broadcast id reads the same */
			return (c->nsid == 1 || c->nsid == 0xffffffff) &&
			       read_page("id-ns.bin", 0, buf, len) >= 0 ? 0 : STATUS_INVALID_FIELD;
		if (cns == 0x02) { /* active namespace list: [1] when there is a namespace */
			char probe[1];
			memset(buf, 0, len);
			if (len >= 4 && read_page("id-ns.bin", 0, probe, 1) >= 0 && c->nsid < 1)
				*(uint32_t *)buf = 1;
			return 0;
		}
		return STATUS_INVALID_FIELD;
	}
	case 0x02: { /* Get Log Page: LID in CDW10 7:0, offset in CDW12/13 */
		unsigned lid = c->cdw10 & 0xff;
		uint64_t offset = c->cdw12 | ((uint64_t)c->cdw13 << 32);
		if (lid == 0x81)
			sanitize_log_read();
		if (lid == 0x02)
			snprintf(name, sizeof(name), "smart-log.bin");
		else
			snprintf(name, sizeof(name), "log-0x%02x.bin", lid);
		if (read_page(name, offset, buf, len) >= 0)
			return 0;
		if (lid == 0x01 || lid == 0x03) { /* mandatory pages: empty error log, no fw info */
			memset(buf, 0, len);
			return 0;
		}
		return STATUS_INVALID_FIELD;
	}
	case 0x0a: { /* Get Features: FID in CDW10 7:0 */
		unsigned fid = c->cdw10 & 0xff;
		uint32_t value;
		if (read_feature_dword(fid, &value) < 0)
			return STATUS_INVALID_FIELD;
		*result = value;
		if (len) {
			snprintf(name, sizeof(name), "feature-0x%02x.bin", fid);
			if (read_page(name, 0, buf, len) < 0)
				memset(buf, 0, len);
		}
		return 0;
	}
	case 0x09: { /* Set Features: FID in CDW10 7:0, Save in bit 31, the value in CDW11 */
		unsigned fid = c->cdw10 & 0xff;
		uint32_t value;
		if (read_feature_dword(fid, &value) < 0)
			return STATUS_INVALID_FIELD; /* a feature the drive does not have */
		snprintf(name, sizeof(name), "feature-0x%02x", fid);
		write_number(name, c->cdw11);
		if (c->cdw10 >> 31) {
			snprintf(name, sizeof(name), "feature-0x%02x.saved", fid);
			write_number(name, c->cdw11);
		}
		return 0;
	}
	case 0x84: /* Sanitize */
		return sanitize(c->cdw10);
	default:
		return STATUS_INVALID_OPCODE;
	}
}

/* ioctl() on the device's fd (interpose.h sends it here; other fds go to libc) */
static int shim_ioctl(unsigned long request, void *arg)
{
	if (request == NVME_IOCTL_ADMIN_CMD || request == NVME_IOCTL_ADMIN64_CMD) {
		/* the two structs agree up to timeout_ms; only the result field differs */
		struct nvme_passthru_cmd64 c;
		uint64_t result;
		int status;

		memset(&c, 0, sizeof(c));
		memcpy(&c, arg, offsetof(struct nvme_passthru_cmd, result));
		status = admin_command(&c, &result);
		if (request == NVME_IOCTL_ADMIN_CMD)
			((struct nvme_passthru_cmd *)arg)->result = (uint32_t)result;
		else
			((struct nvme_passthru_cmd64 *)arg)->result = result;
		if (debug())
			fprintf(stderr,
				"nvme_shim: admin opc=0x%02x nsid=0x%x cdw10=0x%08x cdw11=0x%08x "
				"len=%u -> status 0x%x result 0x%llx\n",
				c.opcode, c.nsid, c.cdw10, c.cdw11, c.data_len, status,
				(unsigned long long)result);
		return status;
	}

	/* NVME_IOCTL_ID, I/O commands, resets, ...: what a controller node says to them */
	if (debug())
		fprintf(stderr, "nvme_shim: ioctl 0x%lx -> ENOTTY\n", request);
	errno = ENOTTY;
	return -1;
}
