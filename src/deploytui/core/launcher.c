/* deploytui measuring launcher: what GNU time does, and nothing else.
 *
 * usage: launcher REPORT_FD GO_FD TIMEOUT_MS COMMAND [ARG...]
 *
 * Waits for one byte on GO_FD (the parent is then idle: nothing of it competes with the timed
 * run), spawns COMMAND (in a process group of its own), waits for it with wait4
 * and writes two JSON lines to REPORT_FD: {"pid": N} as soon as the child exists, then the
 * result (wall time from fork to reaped exit, the child's own ru_maxrss, its exit status).
 * Because this process is tiny, the child's ru_maxrss carries no high-water mark from a big
 * parent (Linux folds the pre-exec peak of the exec'ing process into maxrss); the floor is this
 * launcher's own ~1 MiB. stdin/stdout/stderr are inherited untouched.
 *
 * After TIMEOUT_MS (0: none) the child's whole process group is killed and reaped. If the
 * process that started the launcher dies (even by SIGKILL), or SIGTERM/SIGINT/SIGHUP arrives,
 * the child's group is killed too: nothing is left running.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t child_pid = 0;
static volatile sig_atomic_t timed_out = 0;
static volatile sig_atomic_t stopped_by = 0;

static void on_alarm(int sig) {
    (void)sig;
    timed_out = 1;
    if (child_pid > 0) kill(-child_pid, SIGKILL);
}

static void on_stop(int sig) {
    stopped_by = sig;
    if (child_pid > 0) kill(-child_pid, SIGKILL);
}

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s REPORT_FD GO_FD TIMEOUT_MS COMMAND [ARG...]\n", argv[0]);
        return 2;
    }
    int report = atoi(argv[1]);
    FILE *out = fdopen(report, "w");
    if (!out) {
        fprintf(stderr, "launcher: bad report fd %s\n", argv[1]);
        return 2;
    }
    fcntl(report, F_SETFD, FD_CLOEXEC);
    int go = atoi(argv[2]);
    long timeout_ms = atol(argv[3]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) return 2; /* the starter is already gone */
    /* posix_spawn (glibc: clone with CLONE_VM|CLONE_VFORK, no page-table copy) sets the child's
     * process group and default signal dispositions before exec, and returns exec's errno. A
     * plain fork() here cost ~0.25 ms per run, 10-15 % of a 2 ms burn binary (hyperfine spawns). */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGHUP);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
    char byte;
    ssize_t got;
    do {
        got = read(go, &byte, 1);
    } while (got < 0 && errno == EINTR);
    close(go);
    if (got != 1 || stopped_by) return 2; /* the parent went, or asked us to stop */
    pid_t pid = 0;
    long long t0 = now_ns();
    int exec_errno = posix_spawnp(&pid, argv[4], NULL, &attr, &argv[4], environ);
    posix_spawnattr_destroy(&attr);
    if (exec_errno != 0) {
        fprintf(out, "{\"pid\": 0}\n");
        fprintf(out,
                "{\"wall_ns\": %lld, \"maxrss_kb\": 0, "
                "\"exited\": true, \"code\": 127, \"signal\": 0, \"timed_out\": false, \"stopped_by\": %d, "
                "\"exec_errno\": %d, \"exec_error\": \"%s\"}\n",
                now_ns() - t0, (int)stopped_by, exec_errno, strerror(exec_errno));
        fclose(out);
        return 0;
    }
    child_pid = pid;
    if (stopped_by) kill(-pid, SIGKILL);
    if (timeout_ms > 0) {
        struct itimerval it;
        memset(&it, 0, sizeof it);
        it.it_value.tv_sec = timeout_ms / 1000;
        it.it_value.tv_usec = (timeout_ms % 1000) * 1000;
        setitimer(ITIMER_REAL, &it, NULL);
    }
    fprintf(out, "{\"pid\": %d}\n", (int)pid);
    fflush(out);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("launcher: wait4");
            return 2;
        }
    }
    long long wall = now_ns() - t0;
    kill(-pid, SIGKILL); /* anything the child left behind in its group */
    fprintf(out,
            "{\"wall_ns\": %lld, \"maxrss_kb\": %ld, "
            "\"exited\": %s, \"code\": %d, \"signal\": %d, \"timed_out\": %s, \"stopped_by\": %d, "
            "\"exec_errno\": %d, \"exec_error\": \"%s\"}\n",
            wall, ru.ru_maxrss,
            WIFEXITED(status) ? "true" : "false",
            WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            WIFSIGNALED(status) ? WTERMSIG(status) : 0,
            timed_out ? "true" : "false", (int)stopped_by, 0, "");
    fclose(out);
    return 0;
}
