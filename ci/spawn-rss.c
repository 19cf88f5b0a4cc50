/* Runs a program and prints "<microseconds> <peak RSS KiB> <exit status>" for it.
 * Linux counts the address space a process had before execve in its peak RSS, so the
 * spawner must be tiny: a static C program whose own peak is measured by running it on
 * itself with no program (see ci/bench). */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 0;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = vfork();
    if (pid == 0) {
        execv(argv[1], argv + 1);
        _exit(127);
    }
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) return 126;
    clock_gettime(CLOCK_MONOTONIC, &end);
    long us = (end.tv_sec - start.tv_sec) * 1000000L + (end.tv_nsec - start.tv_nsec) / 1000;
    printf("%ld %ld %d\n", us, usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
    return 0;
}
