// hcclrun: `hcclrun -n N [--timeout SEC] [--bind auto|core|none] [--] prog args...` starts N
// ranks of prog on this host.
// Each rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// HOSTCCL_STORE_HOSTED=1, HOSTCCL_STORE_SECRET and HOSTCCL_JOB_ID: hcclrun itself hosts the TCP
// rendezvous store on 127.0.0.1 (a free port) for the whole run, answering only processes that
// prove the secret (128 random bits, new for each launch, passed only in the ranks' environment);
// the job id (another 128 random bits, not secret) tells this launch's ranks from any other's.
// Every line a rank writes is prefixed "[r] " and kept on stdout or stderr.
// SIGINT/SIGTERM/SIGHUP/SIGQUIT are forwarded to every rank, which then get SIGKILL after a grace
// period; SIGUSR1/SIGUSR2 are forwarded and nothing else happens. A signal that was ignored when
// hcclrun started (nohup, a script's `&`) stays ignored.
// When hcclrun dies, even by SIGKILL, its ranks and their children die with it: each rank is
// started with PR_SET_PDEATHSIG = SIGKILL, and a guardian process (forked first, in a process
// group of its own) learns each rank's process group through a pipe only hcclrun writes; when the
// pipe reports end-of-file without hcclrun having said goodbye, the guardian SIGKILLs those groups.
// When a rank exits non-zero or by a signal, the others get SIGTERM 0.2 s later (unless they ended
// by then: ranks that fail together, e.g. on a bad command line, each get to say why), then
// SIGKILL after a grace period, and hcclrun exits with that rank's status (128 + signal for a signal). --timeout ends
// everything after SEC seconds (exit 124). Usage errors exit 2. Each rank is its own process
// group, so its children die with it.
// Binding (like mpirun's --bind-to core --map-by core): rank r runs on the (r mod k)-th of the k
// CPUs hcclrun may use. "auto" (default) binds when there are at least as many ranks as those
// CPUs: unbound, the scheduler sometimes stacks 3 ranks on one core and 1 on another, and even 2
// ranks on 2 CPUs share one core for milliseconds after a wake-up (seen with sched_switch
// tracing), and every hand-off between ranks sharing a core costs a context switch (~5 us on a
// VM). With fewer ranks than CPUs nothing is bound, so a rank's own threads may use the rest.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "bootstrap/store_auth.h"
#include "common/clock.h"
#include "common/status.h"

extern char** environ;

namespace hostccl::hcclrun {
namespace {

constexpr int kMaxRanks = 1024;
constexpr uint64_t kGraceNs = 3000000000ull;  // SIGTERM -> SIGKILL
constexpr uint64_t kFailQuietNs = 200000000ull;  // a rank failed -> SIGTERM to the others
constexpr uint64_t kDrainNs = 2000000000ull;  // output still open after every rank exited
constexpr size_t kMaxLineBytes = 64 * 1024;   // longer lines are split

const char kHelp[] =
    "usage: hcclrun -n N [--timeout SEC] [--bind auto|core|none] [--] program [args...]\n"
    "  Starts N ranks of program on this host with RANK, WORLD_SIZE, LOCAL_RANK,\n"
    "  LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, HOSTCCL_STORE_HOSTED=1,\n"
    "  HOSTCCL_STORE_SECRET and HOSTCCL_JOB_ID set (HostcclCommInitFromEnv uses them).\n"
    "  Output lines are prefixed with \"[rank] \". SIGINT, SIGTERM, SIGHUP, SIGQUIT,\n"
    "  SIGUSR1 and SIGUSR2 are forwarded to every rank; ranks die with hcclrun.\n"
    "  -n, --np, --nproc N   number of ranks (1..1024)\n"
    "  --timeout SEC         kill every rank after SEC seconds and exit 124\n"
    "  --bind MODE           core: rank r runs on the (r mod k)-th of the k CPUs allowed\n"
    "                        to hcclrun; auto (default): the same when N >= k; none: unbound\n"
    "  -h, --help            this help\n"
    "  Exit status: 0 when every rank succeeded; else the first failing rank's exit\n"
    "  code (128+signal when killed); 124 on timeout; 2 on usage errors.\n";

int UsageError(const std::string& msg) {
  fprintf(stderr, "hcclrun: %s\n%s", msg.c_str(), kHelp);
  return 2;
}

struct Options {
  int nranks = 0;
  double timeout_s = 0;
  std::string bind = "auto";  // auto | core | none
  std::vector<char*> argv;
};

bool ParseCount(const char* s, int* out) {
  char* end = nullptr;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 1 || v > kMaxRanks) return false;
  *out = static_cast<int>(v);
  return true;
}

bool ParseSeconds(const char* s, double* out) {
  char* end = nullptr;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e7) return false;
  *out = v;
  return true;
}

// Returns -1 when parsing succeeded, else the process exit code.
int ParseArgs(int argc, char** argv, Options* opt) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string& name, const char** out) {
      size_t eq = a.find('=');
      if (a.rfind(name + "=", 0) == 0) {
        *out = argv[i] + eq + 1;
        return true;
      }
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    const char* v = nullptr;
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      fputs(kHelp, stdout);
      return 0;
    }
    if (a == "-n" || a == "-np" || a == "--np" || a == "--nproc" || a.rfind("--np=", 0) == 0 ||
        a.rfind("--nproc=", 0) == 0) {
      std::string name = a.substr(0, a.find('='));
      if (!value(name, &v)) return UsageError(name + " needs a value");
      if (!ParseCount(v, &opt->nranks))
        return UsageError(
            StrFormat("%s %s: expected a rank count in 1..%d", name.c_str(), v, kMaxRanks));
    } else if (a.size() > 2 && a.rfind("-n", 0) == 0 && a[2] != 'p') {
      if (!ParseCount(argv[i] + 2, &opt->nranks))
        return UsageError(StrFormat("%s: expected a rank count in 1..%d", a.c_str(), kMaxRanks));
    } else if (a == "--timeout" || a.rfind("--timeout=", 0) == 0) {
      if (!value("--timeout", &v)) return UsageError("--timeout needs a value");
      if (!ParseSeconds(v, &opt->timeout_s))
        return UsageError(StrFormat("--timeout %s: expected a positive number of seconds", v));
    } else if (a == "--bind" || a.rfind("--bind=", 0) == 0) {
      if (!value("--bind", &v)) return UsageError("--bind needs a value");
      opt->bind = v;
      if (opt->bind != "auto" && opt->bind != "core" && opt->bind != "none")
        return UsageError(StrFormat("--bind %s: expected auto, core or none", v));
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("unknown option " + a);
    } else {
      break;
    }
  }
  if (opt->nranks == 0) return UsageError("missing -n N (the number of ranks)");
  if (i >= argc) return UsageError("missing the program to run");
  for (; i < argc; ++i) opt->argv.push_back(argv[i]);
  opt->argv.push_back(nullptr);
  return -1;
}

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone (closed pipe): drop, keep supervising
    off += static_cast<size_t>(n);
  }
}

struct Stream {
  int fd = -1;
  int rank = 0;
  int out_fd = 1;  // where its lines go: 1 = stdout, 2 = stderr
  std::string buf;
};

struct Child {
  pid_t pid = -1;
  bool running = false;
};

class Launcher {
 public:
  explicit Launcher(Options opt) : opt_(std::move(opt)) {}

  int Run() {
    signal(SIGPIPE, SIG_IGN);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
      // A signal ignored when we started (nohup: SIGHUP; a script's `&`: SIGINT and SIGQUIT)
      // stays ignored, for us and for the ranks, who inherit that.
      struct sigaction old {};
      if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      sigaddset(&mask, s);
    }
    sigprocmask(SIG_BLOCK, &mask, &old_mask_);
    sigfd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigfd_ < 0) {
      perror("hcclrun: signalfd");
      return 1;
    }
    // Before the store's thread exists: the guardian is a copy of a one-thread process.
    StartGuardian();
    // After blocking the signals: the store's thread inherits the mask, so signalfd sees them all.
    std::string secret, job_id;
    Status st = boot::RandomBytes(16, &secret);
    if (st.ok()) st = boot::RandomBytes(16, &job_id);
    if (!st.ok()) {
      fprintf(stderr, "hcclrun: cannot make the job's secret: %s\n", st.ToString().c_str());
      return 1;
    }
    secret_ = boot::ToHex(secret);
    // A job id the caller already exports is kept: one job spread over several hosts, one hcclrun
    // per host, must present one id to its rank-table root (docs/launching.md, "Job identity").
    const char* inherited = std::getenv("HOSTCCL_JOB_ID");  // NOLINT: launcher input, not a knob read
    job_id_ = inherited != nullptr && *inherited != '\0' ? std::string(inherited) : boot::ToHex(job_id);
    std::unique_ptr<boot::TcpStoreServer> server;
    st = boot::StartTcpStoreServer("127.0.0.1", 0, &server, secret_);
    if (!st.ok()) {
      fprintf(stderr, "hcclrun: cannot start the rendezvous store: %s\n", st.ToString().c_str());
      return 1;
    }
    devnull_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    PlanBinding();
    start_ns_ = NowNs();
    children_.resize(opt_.nranks);
    for (int r = 0; r < opt_.nranks; ++r) {
      if (!Spawn(r, server->port())) {
        Terminate();
        if (exit_code_ == 0) exit_code_ = 1;
        break;
      }
    }
    Supervise();
    TellGuardian(0);  // an orderly end: nothing to kill (ranks' leftover children stay, as before)
    return exit_code_;
  }

 private:
  // The guardian: a child in its own process group (terminal signals to hcclrun's group do not
  // reach it) that reads messages from hcclrun: +pgid (a rank's group), -pgid (that group is
  // empty now), 0 (hcclrun is ending in order: exit). End-of-file without the 0 means hcclrun died:
  // it SIGKILLs every group it knows and exits. Without a guardian (fork failed) hcclrun goes on;
  // the ranks still die with it by PR_SET_PDEATHSIG, their children may not.
  void StartGuardian() {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
      fprintf(stderr, "hcclrun: no guardian (pipe: %s)\n", strerror(errno));
      return;
    }
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "hcclrun: no guardian (fork: %s)\n", strerror(errno));
      close(p[0]);
      close(p[1]);
      return;
    }
    if (pid == 0) {
      close(p[1]);
      close(sigfd_);
      setpgid(0, 0);
      for (int sig : {SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) signal(sig, SIG_IGN);
      sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
      int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd >= 0) {
        dup2(null_fd, 0);
        dup2(null_fd, 1);  // hold no pipe a reader of hcclrun's stdout waits on
      }
      prctl(PR_SET_NAME, "hcclrun-guard");
      std::vector<int32_t> groups;
      for (;;) {
        int32_t msg = 0;
        ssize_t n = read(p[0], &msg, sizeof(msg));
        if (n < 0 && errno == EINTR) continue;
        if (n != static_cast<ssize_t>(sizeof(msg))) break;  // hcclrun is gone
        if (msg == 0) _exit(0);
        if (msg > 0) {
          groups.push_back(msg);
        } else {
          for (auto& g : groups)
            if (g == -msg) g = 0;
        }
      }
      int killed = 0;
      for (int32_t g : groups)
        if (g > 0 && kill(-g, SIGKILL) == 0) ++killed;
      if (killed > 0) {
        char line[160];
        int len = snprintf(line, sizeof line,
                           "hcclrun: died without ending its ranks; its guardian killed %d rank "
                           "process group(s)\n",
                           killed);
        (void)!write(2, line, static_cast<size_t>(len));
      }
      _exit(0);
    }
    close(p[0]);
    setpgid(pid, pid);
    fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
    guard_fd_ = p[1];
    guard_pid_ = pid;
  }

  void TellGuardian(int32_t msg) {
    if (guard_fd_ < 0) return;
    // 4 bytes to a pipe are written whole; a full pipe (guardian stuck) must not stall us.
    if (write(guard_fd_, &msg, sizeof(msg)) != static_cast<ssize_t>(sizeof(msg))) {
      fprintf(stderr, "hcclrun: lost the guardian (%s)\n", strerror(errno));
      close(guard_fd_);
      guard_fd_ = -1;
    }
  }

  // Fills cpus_ with the CPUs to bind ranks to (empty: no binding).
  void PlanBinding() {
    if (opt_.bind == "none") return;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    if (cpus.empty()) return;
    if (opt_.bind == "auto" && opt_.nranks < static_cast<int>(cpus.size())) return;
    cpus_ = std::move(cpus);
  }

  std::vector<std::string> EnvFor(int rank, uint16_t port) {
    static const char* const kOurs[] = {"RANK",
                                        "WORLD_SIZE",
                                        "LOCAL_RANK",
                                        "LOCAL_WORLD_SIZE",
                                        "GROUP_RANK",
                                        "MASTER_ADDR",
                                        "MASTER_PORT",
                                        "HOSTCCL_STORE_HOSTED",
                                        "HOSTCCL_STORE_SECRET",
                                        "HOSTCCL_JOB_ID"};
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string kv = *e;
      std::string name = kv.substr(0, kv.find('='));
      bool ours = false;
      for (const char* o : kOurs) ours = ours || name == o;
      if (!ours) env.push_back(kv);
    }
    env.push_back(StrFormat("RANK=%d", rank));
    env.push_back(StrFormat("WORLD_SIZE=%d", opt_.nranks));
    env.push_back(StrFormat("LOCAL_RANK=%d", rank));
    env.push_back(StrFormat("LOCAL_WORLD_SIZE=%d", opt_.nranks));
    env.push_back("GROUP_RANK=0");
    env.push_back("MASTER_ADDR=127.0.0.1");
    env.push_back(StrFormat("MASTER_PORT=%u", port));
    env.push_back("HOSTCCL_STORE_HOSTED=1");
    env.push_back("HOSTCCL_STORE_SECRET=" + secret_);
    env.push_back("HOSTCCL_JOB_ID=" + job_id_);
    return env;
  }

  bool Spawn(int rank, uint16_t port) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
      fprintf(stderr, "hcclrun: pipe for rank %d failed: %s\n", rank, strerror(errno));
      return false;
    }
    // Everything the child needs is built before fork (the store thread may hold malloc's lock).
    std::vector<std::string> env = EnvFor(rank, port);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string exec_fail =
        StrFormat("hcclrun: rank %d: cannot execute '%s': ", rank, opt_.argv[0]);
    cpu_set_t bind;
    CPU_ZERO(&bind);
    if (!cpus_.empty()) CPU_SET(cpus_[static_cast<size_t>(rank) % cpus_.size()], &bind);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "hcclrun: fork for rank %d failed: %s\n", rank, strerror(errno));
      return false;
    }
    if (pid == 0) {
      setpgid(0, 0);
      // Die with hcclrun, however it dies. The death signal is armed only from here on: if hcclrun
      // died already, we are an orphan (our parent is someone else) and must not start the rank.
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(128 + SIGKILL);
      signal(SIGPIPE, SIG_DFL);
      sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
      dup2(out[1], 1);
      dup2(err[1], 2);
      if (rank != 0 && devnull_ >= 0) dup2(devnull_, 0);  // only rank 0 reads the terminal
      if (!cpus_.empty()) (void)sched_setaffinity(0, sizeof bind, &bind);
      execvpe(opt_.argv[0], opt_.argv.data(), envp.data());
      int e = errno;
      (void)!write(2, exec_fail.data(), exec_fail.size());
      const char* reason = strerror(e);
      (void)!write(2, reason, strlen(reason));
      (void)!write(2, "\n", 1);
      _exit(127);
    }
    setpgid(pid, pid);  // also here: no race with an early kill(-pid)
    TellGuardian(pid);
    close(out[1]);
    close(err[1]);
    children_[rank].pid = pid;
    children_[rank].running = true;
    ++running_;
    streams_.push_back(Stream{out[0], rank, 1, {}});
    streams_.push_back(Stream{err[0], rank, 2, {}});
    return true;
  }

  void Emit(Stream& s, bool flush_partial) {
    size_t start = 0;
    for (;;) {
      size_t nl = s.buf.find('\n', start);
      if (nl == std::string::npos) break;
      WriteAll(s.out_fd, StrFormat("[%d] ", s.rank) + s.buf.substr(start, nl - start + 1));
      start = nl + 1;
    }
    s.buf.erase(0, start);
    if ((flush_partial && !s.buf.empty()) || s.buf.size() >= kMaxLineBytes) {
      WriteAll(s.out_fd, StrFormat("[%d] ", s.rank) + s.buf + "\n");
      s.buf.clear();
    }
  }

  // Signals each rank's process group; after a failure also groups whose leader already exited
  // (their leftover children would hold our pipes open).
  void Signal(int sig) {
    for (auto& c : children_)
      if (c.pid > 0 && (c.running || terminating_)) kill(-c.pid, sig);
  }

  void Terminate() {
    if (terminating_) return;
    terminating_ = true;
    term_ns_ = NowNs();
    Signal(SIGTERM);
  }

  void Reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      if (pid == guard_pid_) {
        guard_pid_ = -1;
        fprintf(stderr,
                "hcclrun: the guardian (pid %d) ended; if hcclrun dies now, its ranks still die "
                "with it, their children may not\n",
                static_cast<int>(pid));
        if (guard_fd_ >= 0) close(guard_fd_);
        guard_fd_ = -1;
        continue;
      }
      for (size_t r = 0; r < children_.size(); ++r) {
        Child& c = children_[r];
        if (c.pid != pid || !c.running) continue;
        c.running = false;
        --running_;
        if (running_ == 0) all_exited_ns_ = NowNs();
        if (killed_ && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
          ++forced_;
        else
          last_exit_ns_ = NowNs();
        bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (terminating_) kill(-pid, SIGKILL);  // the rank is gone; so go its leftover children
        // An empty group's id may be reused: the guardian must forget it. (A group with members
        // left keeps its id reserved; the guardian kills them if hcclrun dies.)
        if (kill(-pid, 0) != 0 && errno == ESRCH) TellGuardian(-pid);
        if (!failed || terminating_ || failed_ns_ != 0) break;  // deaths we caused are not news
        std::string how = WIFEXITED(status)
                              ? StrFormat("exited with status %d", WEXITSTATUS(status))
                              : StrFormat("was killed by signal %d (%s)", WTERMSIG(status),
                                          strsignal(WTERMSIG(status)));
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        fprintf(stderr, "hcclrun: rank %zu (pid %d) %s; terminating the other %d rank(s)\n", r,
                static_cast<int>(pid), how.c_str(), running_);
        failed_ns_ = NowNs();  // Supervise terminates them kFailQuietNs later
        break;
      }
    }
  }

  void HandleSignals() {
    signalfd_siginfo si;
    while (read(sigfd_, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
      int sig = static_cast<int>(si.ssi_signo);
      if (sig == SIGCHLD) continue;                  // reaped below in any case
      bool stop = sig != SIGUSR1 && sig != SIGUSR2;  // the user signals are only passed on
      fprintf(stderr, "hcclrun: got signal %d (%s); forwarding it to %d rank(s)%s\n", sig,
              strsignal(sig), running_,
              stop ? StrFormat("; SIGKILL follows after %llu s", kGraceNs / 1000000000ull).c_str()
                   : "");
      Signal(sig);
      if (stop && !terminating_) {
        terminating_ = true;  // SIGKILL follows after the grace period
        term_ns_ = NowNs();
        exit_code_ = 128 + sig;
        stop_signal_ = sig;
        stop_running_ = running_;
      }
    }
    Reap();
  }

  // After a stop signal: how the ranks ended.
  void ReportStop() {
    if (stop_signal_ == 0) return;
    fprintf(stderr,
            "hcclrun: after signal %d (%s), %d of %d running rank(s) ended by themselves within "
            "%.2f s; %d were killed after the %llu s grace period\n",
            stop_signal_, strsignal(stop_signal_), stop_running_ - forced_, stop_running_,
            static_cast<double>(last_exit_ns_ > term_ns_ ? last_exit_ns_ - term_ns_ : 0) / 1e9,
            forced_, kGraceNs / 1000000000ull);
  }

  void Supervise() {
    uint64_t timeout_ns =
        opt_.timeout_s > 0 ? start_ns_ + static_cast<uint64_t>(opt_.timeout_s * 1e9) : UINT64_MAX;
    bool open_streams = true;
    while (running_ > 0 || open_streams) {
      uint64_t now = NowNs();
      if (now >= timeout_ns && !timed_out_ && running_ > 0) {
        timed_out_ = true;
        fprintf(stderr, "hcclrun: --timeout %g s expired; killing %d rank(s)\n", opt_.timeout_s,
                running_);
        exit_code_ = 124;
        terminating_ = false;  // a timeout overrides an earlier failure's grace clock
        Terminate();
      }
      if (failed_ns_ != 0 && !terminating_ && (running_ == 0 || now >= failed_ns_ + kFailQuietNs))
        Terminate();
      if (terminating_ && !killed_ && (running_ > 0 || open_streams) &&
          now >= term_ns_ + kGraceNs) {
        killed_ = true;
        Signal(SIGKILL);
      }
      if (running_ == 0 && all_exited_ns_ != 0 && now >= all_exited_ns_ + kDrainNs)
        break;  // grandchildren hold the pipes
      // Sleep until output, a signal, or the next timer.
      uint64_t next = UINT64_MAX;
      if (!timed_out_ && running_ > 0) next = std::min(next, timeout_ns);
      if (terminating_ && !killed_ && running_ > 0) next = std::min(next, term_ns_ + kGraceNs);
      if (failed_ns_ != 0 && !terminating_) next = std::min(next, failed_ns_ + kFailQuietNs);
      if (running_ == 0 && all_exited_ns_ != 0) next = std::min(next, all_exited_ns_ + kDrainNs);
      int wait_ms = 1000;
      if (next != UINT64_MAX)
        wait_ms = next <= now
                      ? 0
                      : static_cast<int>(std::min<uint64_t>((next - now) / 1000000 + 1, 1000));
      std::vector<pollfd> fds{{sigfd_, POLLIN, 0}};
      std::vector<Stream*> owners{nullptr};
      for (auto& s : streams_) {
        if (s.fd < 0) continue;
        fds.push_back({s.fd, POLLIN, 0});
        owners.push_back(&s);
      }
      if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        Stream& s = *owners[i];
        char buf[65536];
        ssize_t n = read(s.fd, buf, sizeof(buf));
        if (n > 0) {
          s.buf.append(buf, static_cast<size_t>(n));
          Emit(s, false);
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          Emit(s, true);
          close(s.fd);
          s.fd = -1;
        }
      }
      HandleSignals();
      open_streams = false;
      for (auto& s : streams_) open_streams = open_streams || s.fd >= 0;
    }
    for (auto& s : streams_) {
      if (s.fd >= 0) {
        Emit(s, true);
        close(s.fd);
      }
    }
    ReportStop();
  }

  Options opt_;
  std::string secret_;         // hex; the store's and the ranks' HOSTCCL_STORE_SECRET
  std::string job_id_;         // hex; the ranks' HOSTCCL_JOB_ID
  int stop_signal_ = 0;        // the first stop signal hcclrun got (0: none)
  int stop_running_ = 0;       // ranks running when it came
  int forced_ = 0;             // ranks that ended by our SIGKILL after the grace period
  uint64_t last_exit_ns_ = 0;  // when the last rank that ended by itself did
  std::vector<int> cpus_;      // CPUs ranks are bound to, round robin (empty: unbound)
  sigset_t old_mask_;
  int sigfd_ = -1;
  int guard_fd_ = -1;  // write end of the guardian's pipe (-1: no guardian)
  pid_t guard_pid_ = -1;
  int devnull_ = -1;
  uint64_t start_ns_ = 0;
  std::vector<Child> children_;
  std::vector<Stream> streams_;
  int running_ = 0;
  uint64_t all_exited_ns_ = 0;
  bool terminating_ = false;
  bool killed_ = false;
  bool timed_out_ = false;
  uint64_t term_ns_ = 0;
  uint64_t failed_ns_ = 0;  // when the first rank failed (0: none did)
  int exit_code_ = 0;
};

}  // namespace
}  // namespace hostccl::hcclrun

int main(int argc, char** argv) {
  hostccl::hcclrun::Options opt;
  int rc = hostccl::hcclrun::ParseArgs(argc, argv, &opt);
  if (rc >= 0) return rc;
  return hostccl::hcclrun::Launcher(std::move(opt)).Run();
}
