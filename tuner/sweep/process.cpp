#include "sweep/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/utf8.hpp"

extern char** environ;

namespace ktune::sweep {
namespace {
constexpr size_t kStderrTail = 16 * 1024;

// Milliseconds until `deadline` for poll(), rounded up so that a wait never spins.
int poll_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count() + 1;
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, INT_MAX));
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

struct SpawnActions {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  SpawnActions() {
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
  }
  ~SpawnActions() {
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
  }
};
}  // namespace

std::string ExitStatus::describe() const {
  if (signal) return fmt::format("signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit code {}", code);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}
UniqueFd::~UniqueFd() { reset(); }
void UniqueFd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::unique_ptr<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error("cannot start a child process: empty command");
  int sv[2], ep[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(fmt::format("cannot start '{}': socketpair: {}", argv[0], std::strerror(errno)));
  UniqueFd ours(sv[0]), theirs(sv[1]);
  if (::pipe2(ep, O_CLOEXEC) != 0)
    throw Error(fmt::format("cannot start '{}': pipe: {}", argv[0], std::strerror(errno)));
  UniqueFd err_read(ep[0]), err_write(ep[1]);

  SpawnActions sa;
  posix_spawn_file_actions_adddup2(&sa.fa, theirs.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&sa.fa, theirs.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&sa.fa, err_write.get(), STDERR_FILENO);
  // Own process group (so that a kill reaches everything the child starts), default signal
  // dispositions and an empty mask, whatever the parent set up for itself.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setpgroup(&sa.attr, 0);
  posix_spawnattr_setsigdefault(&sa.attr, &all);
  posix_spawnattr_setsigmask(&sa.attr, &none);
  posix_spawnattr_setflags(&sa.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (int rc = ::posix_spawn(&pid, argv[0].c_str(), &sa.fa, &sa.attr, args.data(), environ); rc != 0)
    throw Error(fmt::format("cannot start '{}': {}", argv[0], std::strerror(rc)));

  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  set_nonblocking(ours.get());
  set_nonblocking(err_read.get());
  child->channel_ = std::move(ours);
  child->err_ = std::move(err_read);
  return child;
}

ChildProcess::~ChildProcess() { terminate(); }

bool ChildProcess::drain_stderr() {
  char buf[4096];
  while (err_) {
    ssize_t n = ::read(err_.get(), buf, sizeof buf);
    if (n > 0) {
      err_tail_.append(buf, static_cast<size_t>(n));
      if (err_tail_.size() > kStderrTail)
        // From a character's first byte (at most 3 bytes on), keeping at most kStderrTail bytes.
        err_tail_.erase(0, utf8_boundary(err_tail_, err_tail_.size() - kStderrTail + 3));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return true;
    } else {
      err_.reset();
    }
  }
  return false;
}

bool ChildProcess::send_line(std::string_view line, Clock::time_point deadline) {
  std::string data(line);
  data += '\n';
  size_t sent = 0;
  while (sent < data.size()) {
    if (!channel_) return false;
    pollfd fds[2] = {{channel_.get(), POLLOUT, 0}, {err_ ? err_.get() : -1, POLLIN, 0}};
    int rc = ::poll(fds, 2, poll_ms(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) return false;
    if (fds[1].revents) drain_stderr();
    if (fds[0].revents & (POLLERR | POLLHUP)) return false;
    if (fds[0].revents & POLLOUT) {
      ssize_t n = ::send(channel_.get(), data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n > 0)
        sent += static_cast<size_t>(n);
      else if (n < 0 && errno != EAGAIN && errno != EINTR)
        return false;
    }
  }
  return true;
}

ChildProcess::Read ChildProcess::read_line(std::string& line, Clock::time_point deadline) {
  size_t scanned = 0;  // bytes of in_buf_ known to hold no newline: each read is searched once
  while (true) {
    if (auto nl = in_buf_.find('\n', scanned); nl != std::string::npos) {
      line = in_buf_.substr(0, nl);
      in_buf_.erase(0, nl + 1);
      return Read::line;
    }
    scanned = in_buf_.size();
    if (scanned > kMaxLine) return Read::too_long;
    if (!channel_) return Read::closed;
    if (Clock::now() >= deadline) return Read::timeout;
    pollfd fds[2] = {{channel_.get(), POLLIN, 0}, {err_ ? err_.get() : -1, POLLIN, 0}};
    int rc = ::poll(fds, 2, poll_ms(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (fds[1].revents) drain_stderr();
    if (fds[0].revents) {
      char buf[65536];
      ssize_t n = ::read(channel_.get(), buf, sizeof buf);
      if (n > 0)
        in_buf_.append(buf, static_cast<size_t>(n));
      else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        channel_.reset();
    }
  }
}

bool ChildProcess::exited(bool wait) {
  if (reaped_) return true;
  siginfo_t info{};
  // WNOWAIT leaves the child a zombie: its pid (and so its process group id) stays reserved
  // until collect() has killed the group, so the kill can never reach an unrelated process.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT | (wait ? 0 : WNOHANG)) != 0) return false;
  return info.si_pid == pid_;
}

void ChildProcess::collect() {
  ::kill(-pid_, SIGKILL);
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  status_ = WIFSIGNALED(st) ? ExitStatus{0, WTERMSIG(st)} : ExitStatus{WEXITSTATUS(st), 0};
  drain_stderr();
}

bool ChildProcess::running() {
  if (!reaped_ && exited(false)) collect();
  return !reaped_;
}

ExitStatus ChildProcess::terminate() {
  if (!reaped_) {
    ::kill(-pid_, SIGKILL);
    exited(true);
    collect();
  }
  return status_;
}

ExitStatus ChildProcess::finish(std::chrono::milliseconds grace) {
  auto deadline = Clock::now() + grace;
  while (!reaped_ && Clock::now() < deadline) {
    if (exited(false)) {
      collect();
      break;
    }
    // Sleeps on stderr so that a child blocked on a full stderr pipe can still finish.
    pollfd fd{err_ ? err_.get() : -1, POLLIN, 0};
    if (::poll(&fd, 1, std::min(poll_ms(deadline), 20)) > 0) drain_stderr();
  }
  return terminate();
}

}  // namespace ktune::sweep
