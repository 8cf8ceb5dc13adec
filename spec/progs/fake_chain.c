/*
 * System calls made under a frame-pointer chain built by hand: the user
 * part of each kernel sample's call chain is the system call's return
 * address, then 0 (an address no object maps), an address of this
 * program, and 0 again at the root.  perf report's children mode shows
 * such unmapped entries with the [k]/[.] of the entry before them, root
 * first; report_spec compares ours with it.
 *
 *   fake_chain [N]   N reads of 1 MiB from /dev/zero (default 3000)
 *   fake_chain N bad the middle entry is 0xffffffffffffff81, above every
 *                    context marker perf knows (a corrupt chain of a real
 *                    system-wide capture had it): perf discards the chain,
 *                    perf report still counts the sample's own ip
 *   fake_chain N high the middle entry is 0xdfdfdfdf00000000: a user entry
 *                    no map holds, in the kernel's half of the address
 *                    space, which perf looks up as a kernel one (a bash
 *                    sample of a mixed workload had it)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

struct frame {
	struct frame *next;
	void *ret;
};

static char buf[1 << 20];
static struct frame root = { NULL, NULL };
static struct frame middle = { &root, NULL };
static struct frame top = { &middle, NULL };

__attribute__((noinline)) void mapped_caller(void)
{
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000, i, got = 0;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	middle.ret = (char *)mapped_caller + 1;
	if (argc > 2 && argv[2][0] == 'b')
		middle.ret = (void *)(~(unsigned long)0 - 0x7e);
	if (argc > 2 && argv[2][0] == 'h')
		middle.ret = (void *)0xdfdfdfdf00000000UL;
	for (i = 0; i < n; i++) {
		long ret;
		/* rbp points at the chain for the system call only */
		__asm__ volatile("mov %%rbp, %%r12\n\t"
				 "mov %[fp], %%rbp\n\t"
				 "syscall\n\t"
				 "mov %%r12, %%rbp"
				 : "=a"(ret)
				 : "a"((long)SYS_read), "D"((long)fd), "S"(buf), "d"((long)sizeof buf),
				   [fp] "r"(&top)
				 : "rcx", "r11", "r12", "memory");
		got += ret > 0 ? ret : 0;
	}
	printf("%ld\n", got);
	return 0;
}
