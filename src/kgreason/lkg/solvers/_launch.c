/* Sandbox launcher, native twin of _launch.py (same options, same behaviour).
 *
 * Why a C twin: starting a Python interpreter for every solver run cost ~60-80 ms on a
 * loaded machine, more than most solver runs. isolation.py compiles this file once per
 * machine (content-addressed, like the Prover9 copy) when a C compiler is present, and
 * falls back to _launch.py otherwise. Both are exercised by tests/security.
 *
 * Usage: kgr-launch [-r NAME=SOFT:HARD] [-u UID] [-p NPROC] [-l] [-R PATH]... [-W PATH]...
 *        -- command...
 * Order: rlimits; drop to UID; (after a drop) a new user namespace so RLIMIT_NPROC counts
 * only this sandbox; RLIMIT_NPROC; no_new_privs; Landlock; fork; exec. The launcher stays
 * as the parent (init of the PID namespace) and reports a signal death as
 * "kgr-sandbox-signal: N" on stderr with exit 128+N. Failures: "kgr-sandbox: ..." and 125.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define EXIT_SANDBOX 125
#define SYS_LL_CREATE 444
#define SYS_LL_ADD 445
#define SYS_LL_RESTRICT 446
#define READ_RIGHTS ((1ULL << 0) | (1ULL << 2) | (1ULL << 3))
#define FILE_RIGHTS ((1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 14) | (1ULL << 15))

struct ruleset_attr { uint64_t fs, net, scoped; };
struct path_beneath { uint64_t allowed; int32_t parent_fd; } __attribute__((packed));

static void die(const char *what) {
    fprintf(stderr, "kgr-sandbox: %s: %s\n", what, strerror(errno));
    exit(EXIT_SANDBOX);
}

static void die_msg(const char *what) {
    fprintf(stderr, "kgr-sandbox: %s\n", what);
    exit(EXIT_SANDBOX);
}

static uint64_t fs_rights(long abi) {
    if (abi <= 1) return (1ULL << 13) - 1;
    if (abi == 2) return (1ULL << 14) - 1;
    if (abi <= 4) return (1ULL << 15) - 1;
    return (1ULL << 16) - 1;
}

static void add_rules(int fd, char **paths, int n, uint64_t rights, uint64_t handled) {
    for (int i = 0; i < n; i++) {
        int pfd = open(paths[i], O_PATH | O_CLOEXEC);
        if (pfd < 0) continue; /* an absent optional path (e.g. /lib32) */
        struct stat st;
        struct path_beneath rule;
        rule.allowed = rights & handled;
        if (fstat(pfd, &st) == 0 && !S_ISDIR(st.st_mode)) rule.allowed &= FILE_RIGHTS;
        rule.parent_fd = pfd;
        if (syscall(SYS_LL_ADD, fd, 1, &rule, 0) != 0) die("landlock_add_rule failed");
        close(pfd);
    }
}

static void landlock(char **rd, int nr, char **wr, int nw) {
    long abi = syscall(SYS_LL_CREATE, NULL, 0, 1);
    if (abi < 1) die_msg("Landlock is not supported by this kernel");
    struct ruleset_attr attr = {fs_rights(abi), 0, 0};
    size_t size = 8;
    if (abi >= 4) { attr.net = 3; size = 16; }
    if (abi >= 6) { attr.scoped = 3; size = 24; }
    int fd = (int)syscall(SYS_LL_CREATE, &attr, size, 0);
    if (fd < 0) die("landlock_create_ruleset failed");
    add_rules(fd, rd, nr, READ_RIGHTS, attr.fs);
    add_rules(fd, wr, nw, attr.fs, attr.fs);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("prctl(no_new_privs) failed");
    if (syscall(SYS_LL_RESTRICT, fd, 0) != 0) die("landlock_restrict_self failed");
    close(fd);
}

static int rlimit_id(const char *name) {
    if (!strcmp(name, "RLIMIT_CPU")) return RLIMIT_CPU;
    if (!strcmp(name, "RLIMIT_AS")) return RLIMIT_AS;
    if (!strcmp(name, "RLIMIT_CORE")) return RLIMIT_CORE;
    if (!strcmp(name, "RLIMIT_FSIZE")) return RLIMIT_FSIZE;
    if (!strcmp(name, "RLIMIT_NOFILE")) return RLIMIT_NOFILE;
    return -1;
}

static void set_rlimit(char *spec) {
    char *eq = strchr(spec, '=');
    if (!eq) die_msg("bad -r option");
    *eq = 0;
    int id = rlimit_id(spec);
    if (id < 0) die_msg("unknown rlimit");
    char *colon = strchr(eq + 1, ':');
    struct rlimit rl;
    rl.rlim_cur = strtoull(eq + 1, NULL, 10);
    rl.rlim_max = colon ? strtoull(colon + 1, NULL, 10) : rl.rlim_cur;
    if (setrlimit(id, &rl) != 0) die("setrlimit failed");
}

int main(int argc, char **argv) {
    char **rd = calloc(argc, sizeof(char *)), **wr = calloc(argc, sizeof(char *));
    int nr = 0, nw = 0, use_landlock = 0, i = 1;
    long uid = -1, nproc = -1;
    if (!rd || !wr) die("calloc failed");
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "-l")) { use_landlock = 1; continue; }
        if (i + 1 >= argc) die_msg("option without a value");
        char *v = argv[++i];
        switch (argv[i - 1][1]) {
            case 'r': set_rlimit(v); break;
            case 'u': uid = strtol(v, NULL, 10); break;
            case 'p': nproc = strtol(v, NULL, 10); break;
            case 'R': rd[nr++] = v; break;
            case 'W': wr[nw++] = v; break;
            default: die_msg("unknown launcher option");
        }
    }
    if (i + 1 >= argc) die_msg("no command");
    char **cmd = argv + i + 1;
    if (uid >= 0) {
        if (setgroups(0, NULL) != 0) die("setgroups failed");
        if (setresgid(uid, uid, uid) != 0) die("setresgid failed");
        if (setresuid(uid, uid, uid) != 0) die("setresuid failed");
        /* no user namespaces here: a low RLIMIT_NPROC would count every sandbox's
         * `nobody` processes together, so it is left as it is (see docs/security.md) */
        if (unshare(CLONE_NEWUSER) != 0) nproc = -1;
    }
    if (nproc >= 0) {
        struct rlimit rl = {(rlim_t)nproc, (rlim_t)nproc};
        if (setrlimit(RLIMIT_NPROC, &rl) != 0) die("setrlimit(RLIMIT_NPROC) failed");
    }
    if (use_landlock) landlock(rd, nr, wr, nw);
    else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("prctl(no_new_privs) failed");
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) die("fork failed");
    if (pid == 0) {
        execve(cmd[0], cmd, environ);
        dprintf(2, "kgr-sandbox: exec %s failed: %s\n", cmd[0], strerror(errno));
        _exit(EXIT_SANDBOX);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) die("waitpid failed");
    }
    if (WIFSIGNALED(status)) {
        dprintf(2, "\nkgr-sandbox-signal: %d\n", WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}
