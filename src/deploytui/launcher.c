/* deploytui measuring launcher: what GNU time does, and nothing else.
 *
 * usage: launcher REPORT_FD TIMEOUT_MS COMMAND [ARG...]
 *
 * Forks, execs COMMAND in the child (in a process group of its own), waits for it with wait4
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
    if (argc < 4) {
        fprintf(stderr, "usage: %s REPORT_FD TIMEOUT_MS COMMAND [ARG...]\n", argv[0]);
        return 2;
    }
    int report = atoi(argv[1]);
    FILE *out = fdopen(report, "w");
    if (!out) {
        fprintf(stderr, "launcher: bad report fd %s\n", argv[1]);
        return 2;
    }
    fcntl(report, F_SETFD, FD_CLOEXEC);
    long timeout_ms = atol(argv[2]);
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
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) {
        perror("launcher: pipe");
        return 2;
    }
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("launcher: fork");
        return 2;
    }
    if (pid == 0) {
        close(errpipe[0]);
        setpgid(0, 0);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execvp(argv[3], &argv[3]);
        int e = errno;
        if (write(errpipe[1], &e, sizeof e) < 0) { /* nothing more to do */ }
        _exit(127);
    }
    setpgid(pid, pid);
    child_pid = pid;
    if (stopped_by) kill(-pid, SIGKILL);
    if (timeout_ms > 0) {
        struct itimerval it;
        memset(&it, 0, sizeof it);
        it.it_value.tv_sec = timeout_ms / 1000;
        it.it_value.tv_usec = (timeout_ms % 1000) * 1000;
        setitimer(ITIMER_REAL, &it, NULL);
    }
    close(errpipe[1]);
    fprintf(out, "{\"pid\": %d}\n", (int)pid);
    fflush(out);
    int exec_errno = 0;
    ssize_t got;
    do {
        got = read(errpipe[0], &exec_errno, sizeof exec_errno);
    } while (got < 0 && errno == EINTR);
    close(errpipe[0]);
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
            "{\"wall_ns\": %lld, \"maxrss_kb\": %ld, \"utime_us\": %lld, \"stime_us\": %lld, "
            "\"exited\": %s, \"code\": %d, \"signal\": %d, \"timed_out\": %s, \"stopped_by\": %d, "
            "\"exec_errno\": %d, \"exec_error\": \"%s\"}\n",
            wall, ru.ru_maxrss,
            (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
            (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec,
            WIFEXITED(status) ? "true" : "false",
            WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            WIFSIGNALED(status) ? WTERMSIG(status) : 0,
            timed_out ? "true" : "false", (int)stopped_by,
            got == sizeof exec_errno ? exec_errno : 0,
            got == sizeof exec_errno ? strerror(exec_errno) : "");
    fclose(out);
    return 0;
}
