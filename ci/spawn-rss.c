/* Runs a program and prints "<microseconds> <peak RSS KiB> <exit status> <CPU microseconds>"
 * for it: the wall time, and the time the program spent on a CPU (user and system).
 *
 * Linux folds the peak of the address space a process had before execve into the peak
 * RSS it reports for the process (ru_maxrss), and a vfork child has its parent's: the
 * figure is the larger of the spawner's peak and the program's. So the spawner touches
 * as little as it can: no libc, raw system calls, static, no data; its own peak is a
 * few pages (ci/bench measures it by running it on itself with no program).
 *
 * x86_64 Linux only. Build: gcc -O2 -static -nostdlib -fno-pie -no-pie
 *   -fno-stack-protector -fno-asynchronous-unwind-tables -o spawn-rss spawn-rss.c */
#if !defined(__x86_64__) || !defined(__linux__)
#error "spawn-rss speaks x86_64 Linux system calls"
#endif

enum { SYS_write = 1, SYS_vfork = 58, SYS_execve = 59, SYS_wait4 = 61, SYS_clock_gettime = 228, SYS_exit_group = 231 };
enum { CLOCK_MONOTONIC = 1 };

static long syscall4(long number, long a, long b, long c, long d) {
    register long r10 __asm__("r10") = d;
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return ret;
}

static __attribute__((noreturn)) void exit_group(long status) {
    syscall4(SYS_exit_group, status, 0, 0, 0);
    __builtin_unreachable();
}

/* vfork, and in the child execve then exit 127, without touching memory: the child
 * runs on the parent's stack until execve, so everything it needs is in registers. */
static long vfork_exec(const char *path, char **argv, char **envp) {
    long ret;
    __asm__ volatile(
        "mov %[vfork], %%eax\n\t"
        "syscall\n\t"
        "test %%rax, %%rax\n\t"
        "jnz 1f\n\t"
        "mov %[execve], %%eax\n\t"
        "syscall\n\t"
        "mov $127, %%edi\n\t"
        "mov %[exit], %%eax\n\t"
        "syscall\n"
        "1:"
        : "=&a"(ret)
        : "D"(path), "S"(argv), "d"(envp), [vfork] "i"(SYS_vfork), [execve] "i"(SYS_execve), [exit] "i"(SYS_exit_group)
        : "rcx", "r11", "memory");
    return ret;
}

static long microseconds(void) {
    long ts[2];
    syscall4(SYS_clock_gettime, CLOCK_MONOTONIC, (long)ts, 0, 0);
    return ts[0] * 1000000L + ts[1] / 1000;
}

/* Appends `value` in decimal and `end` to `out`; returns the new end. */
static char *put_decimal(char *out, long value, char end) {
    char digits[20];
    int n = 0;
    if (value < 0) {
        *out++ = '-';
        value = -value;
    }
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    while (n) *out++ = digits[--n];
    *out++ = end;
    return out;
}

__attribute__((noreturn, used)) void start(long *stack) {
    long argc = stack[0];
    char **argv = (char **)(stack + 1);
    char **envp = argv + argc + 1;
    if (argc < 2) exit_group(0);
    long start_us = microseconds();
    long pid = vfork_exec(argv[1], argv + 1, envp);
    if (pid < 0) exit_group(126);
    int status;
    /* struct rusage: user and system time as timevals, then ru_maxrss (KiB) and fourteen
     * more longs. */
    long usage[18];
    if (syscall4(SYS_wait4, pid, (long)&status, 0, (long)usage) < 0) exit_group(126);
    long elapsed = microseconds() - start_us;
    int exited = (status & 0x7f) == 0;
    char line[64], *end = line;
    end = put_decimal(end, elapsed, ' ');
    end = put_decimal(end, usage[4], ' ');
    end = put_decimal(end, exited ? (status >> 8) & 0xff : 128, ' ');
    end = put_decimal(end, (usage[0] + usage[2]) * 1000000L + usage[1] + usage[3], '\n');
    syscall4(SYS_write, 1, (long)line, end - line, 0);
    exit_group(0);
}

/* The kernel enters with argc at the stack pointer; the ABI wants a 16-byte aligned
 * stack at a call. */
__asm__(".globl _start\n"
        "_start:\n\t"
        "mov %rsp, %rdi\n\t"
        "and $-16, %rsp\n\t"
        "call start\n\t"
        "hlt\n");
