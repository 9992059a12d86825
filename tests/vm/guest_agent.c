/* swaplab guest agent: runs inside the vm tests' qemu guest, started by the
 * initramfs's /init. Static, no dependencies beyond libc.
 *
 *   swaplab_guest_agent hibernate PAGES SEED
 *       Fills PAGES pages of anonymous memory with the seeded pattern, mlocks
 *       them (so they are in the hibernation image, not in swap), sets
 *       /sys/power/disk to "shutdown" and writes "disk" to /sys/power/state.
 *       The guest powers off once the image is saved. When the write returns
 *       in a resumed guest, every pattern page is checked and the count
 *       printed. Then the guest powers off.
 *   swaplab_guest_agent check-page PAGES SEED
 *       Prints the pattern pages to stdout (for testing the generator against
 *       the host's copy of it; no hibernation).
 *
 * Pattern page i (4096 bytes), all integers little-endian:
 *   0..15    "SWAPLAB-PATTERN\0"
 *   16..23   u64 seed
 *   24..31   u64 page index i
 *   32..4095 508 u64 words w[k] = splitmix64 output k+1 of the state seed ^ i
 *            (state += 0x9E3779B97F4A7C15; z = state; z = (z ^ z >> 30) *
 *            0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB;
 *            w = z ^ z >> 31)
 * tests/vm/vm_check.py regenerates the same pages on the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <time.h>
#include <unistd.h>

enum { kPageSize = 4096, kWords = (kPageSize - 32) / 8 };
static const char kTag[16] = "SWAPLAB-PATTERN";  /* 15 chars + NUL */

static uint64_t NextSplitMix(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void PutLe64(unsigned char *p, uint64_t v) {
  for (int b = 0; b < 8; b++) p[b] = (unsigned char)(v >> (8 * b));
}

/* Writes pattern page `index` of `seed` into page[0..4095]. */
static void MakePage(unsigned char *page, uint64_t seed, uint64_t index) {
  memcpy(page, kTag, sizeof kTag);
  PutLe64(page + 16, seed);
  PutLe64(page + 24, index);
  uint64_t state = seed ^ index;
  for (int k = 0; k < kWords; k++) PutLe64(page + 32 + 8 * k, NextSplitMix(&state));
}

static double Uptime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes `value` to a sysfs file; returns 0 or the errno of the write. */
static int WriteSysfs(const char *path, const char *value) {
  int fd = open(path, O_WRONLY);
  if (fd < 0) return errno;
  ssize_t n = write(fd, value, strlen(value));
  int err = n < 0 ? errno : 0;
  close(fd);
  return err;
}

static void PowerOff(void) {
  fflush(stdout);
  sync();
  reboot(RB_POWER_OFF);
  /* Only reached when not allowed to power off (not PID 1's session). */
  perror("swaplab-agent: reboot(RB_POWER_OFF)");
  exit(1);
}

static int Hibernate(uint64_t pages, uint64_t seed) {
  size_t bytes = (size_t)pages * kPageSize;
  unsigned char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    perror("swaplab-agent: mmap");
    return 1;
  }
  for (uint64_t i = 0; i < pages; i++) MakePage(mem + i * kPageSize, seed, i);
  if (mlock(mem, bytes) != 0) {
    perror("swaplab-agent: mlock");
    return 1;
  }
  printf("swaplab-agent: pattern %" PRIu64 " pages seed %" PRIu64 "\n", pages, seed);
  int err = WriteSysfs("/sys/power/disk", "shutdown");
  if (err != 0) {
    printf("swaplab-agent: cannot set /sys/power/disk to shutdown: %s\n", strerror(err));
    return 1;
  }
  printf("swaplab-agent: hibernating at uptime %.2f s\n", Uptime());
  fflush(stdout);
  err = WriteSysfs("/sys/power/state", "disk");
  if (err != 0) {
    printf("swaplab-agent: hibernation failed: %s\n", strerror(err));
    return 1;
  }
  /* Here only in the resumed guest (with disk=shutdown the saving one powers off). */
  unsigned char want[kPageSize];
  uint64_t bad = 0;
  for (uint64_t i = 0; i < pages; i++) {
    MakePage(want, seed, i);
    if (memcmp(want, mem + i * kPageSize, kPageSize) != 0) bad++;
  }
  if (bad == 0)
    printf("swaplab-agent: resumed, %" PRIu64 " pattern pages intact\n", pages);
  else
    printf("swaplab-agent: resumed, %" PRIu64 " of %" PRIu64 " pattern pages differ\n", bad, pages);
  printf("swaplab-agent: resumed at uptime %.2f s\n", Uptime());
  return bad == 0 ? 0 : 1;
}

static uint64_t ParseU64(const char *s, const char *what) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno != 0 || *end != '\0' || end == s) {
    fprintf(stderr, "swaplab-agent: bad %s '%s'\n", what, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s hibernate|check-page PAGES SEED\n", argv[0]);
    return 2;
  }
  uint64_t pages = ParseU64(argv[2], "PAGES");
  uint64_t seed = ParseU64(argv[3], "SEED");
  if (strcmp(argv[1], "check-page") == 0) {
    unsigned char page[kPageSize];
    for (uint64_t i = 0; i < pages; i++) {
      MakePage(page, seed, i);
      fwrite(page, 1, sizeof page, stdout);
    }
    return 0;
  }
  if (strcmp(argv[1], "hibernate") != 0) {
    fprintf(stderr, "swaplab-agent: unknown mode '%s'\n", argv[1]);
    return 2;
  }
  int rc = Hibernate(pages, seed);
  if (getpid() == 1 || getenv("SWAPLAB_AGENT_POWEROFF")) PowerOff();
  return rc;
}
