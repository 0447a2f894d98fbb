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
 *     feature-0xNN      Get Features FID NN: the completion dword, as a hex number in text
 *     feature-0xNN.bin  Get Features FID NN: the data buffer (e.g. 0x0c, the APST table)
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
