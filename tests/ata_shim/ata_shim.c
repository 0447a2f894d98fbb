/*
 * ata_shim.c - an LD_PRELOAD library that turns one device path into a fake SATA disk behind a
 * SCSI-to-ATA Translation layer (SAT), the way Linux's libata presents a SATA drive as /dev/sdX.
 *
 * Why: ssdlab parses what `smartctl -j -a /dev/sdX` prints for SATA drives.  To test that parser
 * against the real program's output (not a hand-written imitation), and for drives both in and
 * out of smartctl's drive database, this library sits under the real, unmodified smartctl and
 * answers the SCSI commands it sends, including the ATA commands tunnelled in ATA PASS-THROUGH.
 *
 *   ATA_SHIM_DEVICE  the path smartctl is given, e.g. /dev/sdz
 *   ATA_SHIM_DIR     a directory of pages (tests/ata_shim/pages.py writes them):
 *     identify.bin          IDENTIFY DEVICE (0xEC), 512 bytes
 *     smart-data.bin        SMART READ DATA (0xB0/0xD0), 512 bytes
 *     smart-thresholds.bin  SMART READ THRESHOLDS (0xB0/0xD1), 512 bytes
 *     smart-log-0xNN.bin    SMART READ LOG (0xB0/0xD5) of log address NN (0x00 = directory)
 *     gp-log-0xNN.bin       READ LOG EXT (0x2F) / READ LOG DMA EXT (0x47) of log NN, 512 bytes
 *                           a page, page P at offset 512 * P
 *     smart-status-failing  if this file exists, SMART RETURN STATUS says "threshold exceeded"
 *   ATA_SHIM_DEBUG   if set, every command is logged to stderr
 *   ATA_SHIM_TIME    if set, time() returns this many seconds since the epoch, so that what
 *                    smartctl prints as "local_time" is the same on every re-recording
 *
 * A command or log the pages do not cover ends with ATA status ERR and error ABRT ("aborted"),
 * which is what a drive lacking the feature answers; smartctl then behaves as it would on such a
 * drive.  Files are read again for every command, so a test may swap a page between two reads.
 *
 * Opening ATA_SHIM_DEVICE opens /dev/null instead (tests/shim_common/interpose.h, shared with
 * the NVMe shim, has how and why); ioctl() on that fd is answered here.  smartctl's Linux
 * autodetection (os_linux.cpp, 7.3) treats any /dev/s* name as SCSI (after finding no USB bridge
 * in /sys/block, so the path must not be a real disk of this machine), sends a standard INQUIRY
 * through the SG_IO ioctl (sg_io_hdr, interface 'S'), sees the T10 vendor "ATA     " that every
 * SAT layer reports, and probes ATA PASS-THROUGH (16) with IDENTIFY DEVICE.  When that works it
 * talks ATA from then on ("/dev/sdz [SAT]").
 *
 * Build: gcc -shared -fPIC -O2 -I ../shim_common -o ata_shim.so ata_shim.c -ldl
 */
#define SHIM_NAME "ata_shim"
#define SHIM_ENV_DEVICE "ATA_SHIM_DEVICE"
#define SHIM_ENV_DIR "ATA_SHIM_DIR"
#define SHIM_ENV_DEBUG "ATA_SHIM_DEBUG"
#define SHIM_ENV_TIME "ATA_SHIM_TIME"
#include "interpose.h"

#include <scsi/sg.h>

/* SCSI status, sense keys and the SG_IO result flags a CHECK CONDITION comes back with */
#define SAM_GOOD 0x00
#define SAM_CHECK_CONDITION 0x02
#define SK_NO_SENSE 0x0
#define SK_RECOVERED_ERROR 0x1
#define SK_ILLEGAL_REQUEST 0x5
#define SK_ABORTED_COMMAND 0xb
#define DRIVER_SENSE 0x08

/* ATA status and error register bits */
#define ATA_DRDY 0x40
#define ATA_DSC 0x10 /* "device seek complete", still set by most drives on success */
#define ATA_ERR 0x01
#define ATA_ABRT 0x04

/* ------------------------------------------------------------------------------------------ */
/* Pages (read_page() is in interpose.h)                                                       */

static int page_exists(const char *name)
{
	char path[PATH_MAX];
	page_path(path, sizeof(path), name);
	return access(path, F_OK) == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The ATA side: one command in, registers (and data) out                                      */

/*
 * The ATA registers of a command, 48-bit wide.  The *_hi bytes are the "previous" (high-order)
 * halves, zero for 28-bit commands.  In: features, count, lba_*, device, command.  Out: error,
 * count, lba_*, device, status - what the drive's Device-to-Host FIS carries back.
 */
struct ata_regs {
	uint8_t features, features_hi;
	uint8_t count, count_hi;
	uint8_t lba_low, lba_low_hi;
	uint8_t lba_mid, lba_mid_hi;
	uint8_t lba_high, lba_high_hi;
	uint8_t device;
	uint8_t command; /* in */
	uint8_t status;  /* out */
	uint8_t error;   /* out */
};

/* SMART commands carry the signature 0x4F/0xC2 in LBA mid/high; RETURN STATUS answers with it,
 * or with 0xF4/0x2C when an attribute is at or below its threshold */
#define SMART_LBA_MID 0x4f
#define SMART_LBA_HIGH 0xc2
#define SMART_FAIL_MID 0xf4
#define SMART_FAIL_HIGH 0x2c

enum { ATA_DONE = 0, ATA_ABORTED = -1 };

static int read_or_abort(const char *name, long offset, uint8_t *buf, uint32_t len)
{
	long got = read_page(name, offset, buf, len);
	/* no file, or nothing at `offset`: a log page beyond the log's size is an error on a real
	 * drive too */
	return got > 0 || (got == 0 && len == 0) ? ATA_DONE : ATA_ABORTED;
}

/* the SMART command (0xB0): which one is in the features register */
static int smart_command(const struct ata_regs *in, struct ata_regs *out, uint8_t *buf, uint32_t len)
{
	char name[40];

	/* a real drive rejects a SMART command without the signature */
	if (in->lba_mid != SMART_LBA_MID || in->lba_high != SMART_LBA_HIGH)
		return ATA_ABORTED;
	switch (in->features) {
	case 0xd0: /* READ DATA: the attribute table and offline/self-test status */
		return read_or_abort("smart-data.bin", 0, buf, len);
	case 0xd1: /* READ ATTRIBUTE THRESHOLDS (obsolete in ACS, still answered by drives) */
		return read_or_abort("smart-thresholds.bin", 0, buf, len);
	case 0xd5: /* READ LOG: log address in LBA low, always from its first page */
		snprintf(name, sizeof(name), "smart-log-0x%02x.bin", in->lba_low);
		return read_or_abort(name, 0, buf, len);
	case 0xda: /* RETURN STATUS: the verdict is in LBA mid/high, no data */
		if (page_exists("smart-status-failing")) {
			out->lba_mid = SMART_FAIL_MID;
			out->lba_high = SMART_FAIL_HIGH;
		} else {
			out->lba_mid = SMART_LBA_MID;
			out->lba_high = SMART_LBA_HIGH;
		}
		return ATA_DONE;
	case 0xd2: /* ENABLE/DISABLE ATTRIBUTE AUTOSAVE: accepted, nothing to keep */
	case 0xd8: /* ENABLE OPERATIONS: SMART is always enabled here */
		return ATA_DONE;
	default: /* WRITE LOG, EXECUTE OFFLINE IMMEDIATE (self-tests), DISABLE, ...: not emulated */
		return ATA_ABORTED;
	}
}

/*
 * One ATA command.  `buf`/`len` is the data-in buffer (len 0 for non-data commands).  Fills the
 * output registers and returns ATA_DONE, or ATA_ABORTED for the drive's "command aborted".
 */
static int ata_command(const struct ata_regs *in, struct ata_regs *out, uint8_t *buf, uint32_t len)
{
	char name[40];

	switch (in->command) {
	case 0xec: /* IDENTIFY DEVICE */
		return read_or_abort("identify.bin", 0, buf, len);
	case 0xe5: /* CHECK POWER MODE: count 0xFF = active or idle */
		out->count = 0xff;
		return ATA_DONE;
	case 0xb0:
		return smart_command(in, out, buf, len);
	case 0x2f:   /* READ LOG EXT */
	case 0x47: { /* READ LOG DMA EXT: the same log, read by DMA */
		/* log address in LBA 7:0, page number in LBA 15:8 and 39:32 (as smartctl sends it) */
		unsigned page = in->lba_mid | ((unsigned)in->lba_mid_hi << 8);
		snprintf(name, sizeof(name), "gp-log-0x%02x.bin", in->lba_low);
		return read_or_abort(name, 512L * page, buf, len);
	}
	default: /* IDENTIFY PACKET DEVICE (this is no ATAPI device), SCT, writes, ...: aborted */
		return ATA_ABORTED;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* The SCSI side: what a SAT layer (libata for /dev/sdX) makes of a CDB                        */

struct scsi_result {
	uint8_t status;       /* SAM status: GOOD or CHECK CONDITION */
	uint8_t sense[32];
	unsigned sense_len;
	uint32_t transferred; /* bytes of data-in actually returned */
};

/* fixed-format sense (0x70), what libata returns for SCSI commands it rejects itself */
static void fixed_sense(struct scsi_result *r, uint8_t key, uint8_t asc, uint8_t ascq)
{
	r->status = SAM_CHECK_CONDITION;
	memset(r->sense, 0, sizeof(r->sense));
	r->sense[0] = 0x70;
	r->sense[2] = key;
	r->sense[7] = 10; /* additional sense length: bytes 8..17 */
	r->sense[12] = asc;
	r->sense[13] = ascq;
	r->sense_len = 18;
}

/*
 * Descriptor-format sense (0x72) carrying the ATA Status Return descriptor (code 0x09): how a
 * SAT layer hands back the ATA output registers of a pass-through command, both when CK_COND
 * asks for them and when the command failed.
 */
static void ata_return_sense(struct scsi_result *r, uint8_t key, uint8_t asc, uint8_t ascq,
			     const struct ata_regs *out, int extend)
{
	uint8_t *d = r->sense + 8;

	r->status = SAM_CHECK_CONDITION;
	memset(r->sense, 0, sizeof(r->sense));
	r->sense[0] = 0x72;
	r->sense[1] = key;
	r->sense[2] = asc;
	r->sense[3] = ascq;
	r->sense[7] = 14; /* additional length: one 14-byte descriptor */
	d[0] = 0x09;      /* ATA Status Return */
	d[1] = 0x0c;      /* its additional length */
	d[2] = extend ? 1 : 0;
	d[3] = out->error;
	d[4] = out->count_hi;
	d[5] = out->count;
	d[6] = out->lba_low_hi;
	d[7] = out->lba_low;
	d[8] = out->lba_mid_hi;
	d[9] = out->lba_mid;
	d[10] = out->lba_high_hi;
	d[11] = out->lba_high;
	d[12] = out->device;
	d[13] = out->status;
	r->sense_len = 8 + 14;
}

/*
 * ATA PASS-THROUGH (16) (opcode 0x85) or (12) (0xA1): unpack the registers, run the command,
 * and report the way SAT says: data (if any) in the buffer; GOOD status when the command
 * succeeded and CK_COND is clear; else CHECK CONDITION with the ATA Status Return descriptor -
 * sense key RECOVERED ERROR and "ATA pass-through information available" (0x00/0x1D) for a
 * success whose registers were asked for, ABORTED COMMAND for a command the drive aborted.
 */
static void ata_pass_through(const uint8_t *cdb, int cdb_len, uint8_t *data, uint32_t data_len,
			     int data_in, struct scsi_result *r)
{
	struct ata_regs in, out;
	int extend = 0, protocol = (cdb[1] >> 1) & 0x0f, ck_cond = (cdb[2] >> 5) & 1;

	memset(&in, 0, sizeof(in));
	if (cdb_len >= 16 && cdb[0] == 0x85) {
		extend = cdb[1] & 1;
		in.features_hi = cdb[3];
		in.features = cdb[4];
		in.count_hi = cdb[5];
		in.count = cdb[6];
		in.lba_low_hi = cdb[7];
		in.lba_low = cdb[8];
		in.lba_mid_hi = cdb[9];
		in.lba_mid = cdb[10];
		in.lba_high_hi = cdb[11];
		in.lba_high = cdb[12];
		in.device = cdb[13];
		in.command = cdb[14];
	} else {
		in.features = cdb[3];
		in.count = cdb[4];
		in.lba_low = cdb[5];
		in.lba_mid = cdb[6];
		in.lba_high = cdb[7];
		in.device = cdb[8];
		in.command = cdb[9];
	}

	/* success: DRDY (and DSC), no error; device echoes what was sent */
	memset(&out, 0, sizeof(out));
	out.device = in.device;
	out.status = ATA_DRDY | ATA_DSC;

	int rc;
	if (!data_in && data_len > 0) /* PIO/DMA data-out (SMART WRITE LOG, ...): not emulated */
		rc = ATA_ABORTED;
	else
		rc = ata_command(&in, &out, data_in ? data : NULL, data_in ? data_len : 0);

	if (rc == ATA_DONE)
		r->transferred = data_in ? data_len : 0;
	else {
		/* a drive that aborts sends no data; the registers carry ERR and ABRT */
		memset(&out, 0, sizeof(out));
		out.device = in.device;
		out.status = ATA_DRDY | ATA_DSC | ATA_ERR;
		out.error = ATA_ABRT;
		if (data_in && data)
			memset(data, 0, data_len);
		r->transferred = 0;
	}

	if (debug())
		fprintf(stderr,
			"ata_shim: ATA PT(%d) proto=%d ck_cond=%d cmd=0x%02x feat=0x%02x count=%u "
			"lba=%02x:%02x:%02x/%02x:%02x:%02x len=%u -> %s\n",
			cdb_len, protocol, ck_cond, in.command, in.features, in.count, in.lba_high,
			in.lba_mid, in.lba_low, in.lba_high_hi, in.lba_mid_hi, in.lba_low_hi, data_len,
			rc == ATA_DONE ? "ok" : "aborted");

	if (rc != ATA_DONE)
		ata_return_sense(r, SK_ABORTED_COMMAND, 0x00, 0x00, &out, extend);
	else if (ck_cond)
		ata_return_sense(r, SK_RECOVERED_ERROR, 0x00, 0x1d, &out, extend);
	else
		r->status = SAM_GOOD;
}

/* an ATA string (IDENTIFY words, two characters a word, first one in the high byte) */
static void ata_string(const uint8_t *id, int word, int nwords, char *out)
{
	for (int i = 0; i < nwords; i++) {
		out[2 * i] = (char)id[2 * (word + i) + 1];
		out[2 * i + 1] = (char)id[2 * (word + i)];
	}
}

static unsigned id_word(const uint8_t *id, int word) { return id[2 * word] | (id[2 * word + 1] << 8); }

/* capacity in logical sectors, and the logical sector size in bytes, from IDENTIFY */
static uint64_t id_capacity(const uint8_t *id, uint32_t *sector_size, unsigned *phys_exp)
{
	uint64_t sectors = 0;
	unsigned w106 = id_word(id, 106);

	if (id_word(id, 83) & (1 << 10)) /* 48-bit addressing: words 100-103 */
		for (int i = 3; i >= 0; i--)
			sectors = (sectors << 16) | id_word(id, 100 + i);
	else
		sectors = id_word(id, 60) | ((uint64_t)id_word(id, 61) << 16);
	*sector_size = 512;
	*phys_exp = 0;
	if ((w106 & 0xc000) == 0x4000) { /* word 106 is valid */
		if (w106 & (1 << 12))   /* logical sector longer than 256 words: words 117-118 */
			*sector_size = 2 * (id_word(id, 117) | (id_word(id, 118) << 16));
		if (w106 & (1 << 13))   /* several logical sectors per physical one */
			*phys_exp = w106 & 0x0f;
	}
	return sectors;
}

static uint32_t copy_out(uint8_t *data, uint32_t data_len, const uint8_t *src, uint32_t n, uint32_t alloc)
{
	if (n > alloc)
		n = alloc;
	if (n > data_len)
		n = data_len;
	memcpy(data, src, n);
	return n;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

/* INQUIRY (0x12): the standard data libata builds from IDENTIFY, and three VPD pages */
static void inquiry(const uint8_t *cdb, uint8_t *data, uint32_t data_len, struct scsi_result *r)
{
	uint8_t id[512], page[600];
	uint32_t alloc = (cdb[3] << 8) | cdb[4];
	unsigned n;

	if (read_page("identify.bin", 0, id, sizeof(id)) < 0)
		memset(id, 0, sizeof(id));
	memset(page, 0, sizeof(page));

	if (!(cdb[1] & 1)) { /* standard INQUIRY data */
		if (cdb[2]) {
			fixed_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00); /* invalid field in CDB */
			return;
		}
		page[0] = 0x00;  /* direct-access block device */
		page[2] = 0x05;  /* SPC-3 */
		page[3] = 0x02;  /* response data format 2 */
		page[4] = 96 - 5;
		memcpy(page + 8, "ATA     ", 8); /* SAT: the T10 vendor of an ATA device is "ATA" */
		ata_string(id, 27, 8, (char *)page + 16); /* product: the model's first 16 characters */
		/* revision: the last 4 firmware characters, or the first 4 if those are blank */
		ata_string(id, 25, 2, (char *)page + 32);
		if (memcmp(page + 32, "    ", 4) == 0)
			ata_string(id, 23, 2, (char *)page + 32);
		n = 96;
	} else {
		switch (cdb[2]) {
		case 0x00: /* supported VPD pages */
			page[1] = 0x00;
			page[3] = 3;
			page[4] = 0x00, page[5] = 0x80, page[6] = 0x89;
			n = 4 + 3;
			break;
		case 0x80: /* unit serial number: the ATA serial */
			page[1] = 0x80;
			page[3] = 20;
			ata_string(id, 10, 10, (char *)page + 4);
			n = 4 + 20;
			break;
		case 0x89: /* ATA Information: the SATL, the device signature and IDENTIFY data */
			page[1] = 0x89;
			page[2] = 0x02, page[3] = 0x38; /* page length 568 */
			memcpy(page + 8, "linux   ", 8);
			memcpy(page + 16, "libata          ", 16);
			memcpy(page + 32, "    ", 4);
			/* the Device-to-Host FIS after reset: an ATA (not ATAPI) signature */
			page[36] = 0x34, page[38] = 0x50, page[39] = 0x01, page[40] = 0x01, page[48] = 0x01;
			page[56] = 0xec; /* IDENTIFY DEVICE */
			memcpy(page + 60, id, 512);
			n = 572;
			break;
		default:
			fixed_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
			return;
		}
	}
	r->transferred = copy_out(data, data_len, page, n, alloc);
}

/* READ CAPACITY (10) (0x25) and (16) (0x9E/0x10), from IDENTIFY's capacity and sector sizes */
static void read_capacity(const uint8_t *cdb, uint8_t *data, uint32_t data_len, struct scsi_result *r)
{
	uint8_t id[512], buf[32];
	uint32_t size;
	unsigned exp;

	if (read_page("identify.bin", 0, id, sizeof(id)) < 0)
		memset(id, 0, sizeof(id));
	uint64_t last = id_capacity(id, &size, &exp) - 1;
	memset(buf, 0, sizeof(buf));
	if (cdb[0] == 0x25) {
		put_be32(buf, last > 0xffffffffULL ? 0xffffffffU : (uint32_t)last);
		put_be32(buf + 4, size);
		r->transferred = copy_out(data, data_len, buf, 8, 8);
		return;
	}
	put_be32(buf, (uint32_t)(last >> 32));
	put_be32(buf + 4, (uint32_t)last);
	put_be32(buf + 8, size);
	buf[13] = exp;
	if (id_word(id, 169) & 1) /* TRIM: logical block provisioning management enabled */
		buf[14] = 0x80;
	uint32_t alloc = ((uint32_t)cdb[10] << 24) | (cdb[11] << 16) | (cdb[12] << 8) | cdb[13];
	r->transferred = copy_out(data, data_len, buf, 32, alloc);
}

/* One CDB.  Anything not emulated is an "invalid command operation code", as from libata. */
static void scsi_command(const uint8_t *cdb, int cdb_len, uint8_t *data, uint32_t data_len, int data_in,
			 struct scsi_result *r)
{
	memset(r, 0, sizeof(*r));
	switch (cdb[0]) {
	case 0x00: /* TEST UNIT READY */
		break;
	case 0x03: { /* REQUEST SENSE: nothing pending */
		uint8_t s[18] = { 0x70, 0, SK_NO_SENSE, 0, 0, 0, 0, 10 };
		r->transferred = copy_out(data, data_len, s, sizeof(s), cdb[4]);
		break;
	}
	case 0x12:
		inquiry(cdb, data, data_len, r);
		break;
	case 0x25:
		read_capacity(cdb, data, data_len, r);
		break;
	case 0x9e:
		if ((cdb[1] & 0x1f) == 0x10)
			read_capacity(cdb, data, data_len, r);
		else
			fixed_sense(r, SK_ILLEGAL_REQUEST, 0x24, 0x00);
		break;
	case 0x85:
	case 0xa1:
		ata_pass_through(cdb, cdb_len, data, data_len, data_in, r);
		break;
	default:
		fixed_sense(r, SK_ILLEGAL_REQUEST, 0x20, 0x00);
		break;
	}
	if (debug() && cdb[0] != 0x85 && cdb[0] != 0xa1)
		fprintf(stderr, "ata_shim: SCSI op 0x%02x (cdb[1]=0x%02x cdb[2]=0x%02x) len=%u -> status 0x%02x, %u bytes\n",
			cdb[0], cdb_len > 1 ? cdb[1] : 0, cdb_len > 2 ? cdb[2] : 0, data_len, r->status, r->transferred);
}

/* SG_IO with a v3 header (what the block layer accepts on /dev/sdX): run it, fill the result */
static int sg_io(struct sg_io_hdr *h)
{
	struct scsi_result r;

	if (h->interface_id != 'S') { /* a v4 (bsg) header: the sd node refuses it */
		errno = EINVAL;
		return -1;
	}
	if (h->iovec_count || !h->cmdp || h->cmd_len < 6) {
		errno = EINVAL;
		return -1;
	}
	int data_in = h->dxfer_direction == SG_DXFER_FROM_DEV || h->dxfer_direction == SG_DXFER_TO_FROM_DEV;
	uint32_t len = h->dxfer_direction == SG_DXFER_NONE ? 0 : h->dxfer_len;
	scsi_command(h->cmdp, h->cmd_len, (uint8_t *)h->dxferp, len, data_in, &r);

	h->status = r.status;
	h->masked_status = r.status >> 1;
	h->msg_status = 0;
	h->host_status = 0;
	h->driver_status = r.status == SAM_CHECK_CONDITION ? DRIVER_SENSE : 0;
	h->sb_len_wr = 0;
	if (r.sense_len && h->sbp && h->mx_sb_len) {
		h->sb_len_wr = r.sense_len < h->mx_sb_len ? r.sense_len : h->mx_sb_len;
		memcpy(h->sbp, r.sense, h->sb_len_wr);
	}
	h->resid = (int)(len - r.transferred);
	h->duration = 1;
	h->info = (h->status || h->driver_status) ? SG_INFO_CHECK : SG_INFO_OK;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* ioctl                                                                                       */

/* values of <scsi/scsi_ioctl.h> and <linux/fs.h>, spelt out to keep the include list short */
#define SCSI_IOCTL_GET_IDLUN 0x5382
#define SCSI_IOCTL_GET_BUS_NUMBER 0x5386
#define BLKSSZGET_ 0x1268
#define BLKGETSIZE64_ 0x80081272

/* ioctl() on the device's fd (interpose.h sends it here; other fds go to libc) */
static int shim_ioctl(unsigned long request, void *arg)
{
	switch (request) {
	case SG_IO:
		return sg_io((struct sg_io_hdr *)arg);
	case SG_GET_VERSION_NUM: /* the sg driver version the block layer claims */
		*(int *)arg = 30527;
		return 0;
	case SCSI_IOCTL_GET_IDLUN: { /* { id | lun << 8 | channel << 16 | host << 24, unique id } */
		int *idlun = (int *)arg;
		idlun[0] = 0;
		idlun[1] = 0;
		return 0;
	}
	case SCSI_IOCTL_GET_BUS_NUMBER:
		*(int *)arg = 0;
		return 0;
	case SG_GET_SCSI_ID: {
		struct sg_scsi_id *sid = (struct sg_scsi_id *)arg;
		memset(sid, 0, sizeof(*sid));
		sid->scsi_type = 0; /* disk */
		sid->h_cmd_per_lun = 1;
		sid->d_queue_depth = 31;
		return 0;
	}
	case BLKSSZGET_:
	case BLKGETSIZE64_: {
		uint8_t id[512];
		uint32_t size;
		unsigned exp;
		if (read_page("identify.bin", 0, id, sizeof(id)) < 0)
			memset(id, 0, sizeof(id));
		uint64_t sectors = id_capacity(id, &size, &exp);
		if (request == BLKSSZGET_)
			*(int *)arg = (int)size;
		else
			*(uint64_t *)arg = sectors * size;
		return 0;
	}
	default:
		if (debug())
			fprintf(stderr, "ata_shim: ioctl 0x%lx -> ENOTTY\n", request);
		errno = ENOTTY;
		return -1;
	}
}
