/*
 * The native thin client of rc1-build (docs/engine.md, "The resident server").
 *
 * A served command spends most of a fresh `node` process's start (~60-70 ms) before it says a
 * word to the server. This program is bin/rc1-build.js's served path in C, as Bazel's client is
 * C++ beside its Java server: it finds the workspace, reads .rc1/server.json, checks that the
 * server is alive and is this user's, waits for the server's token, sends the command line, the
 * working directory, the environment and the terminal, and then copies the server's stdout and
 * stderr frames to its own, forwards SIGINT/SIGTERM and the terminal's width, and exits with the
 * command's exit code. Wherever the JavaScript client would run the command in-process, this one
 * execs it: `node bin/rc1-build.js ARGS` (node found on PATH, as the script's `#!/usr/bin/env
 * node` finds it), with RC1_CLIENT_SERVER_TRIED=1 when a server was asked and refused, so the
 * script does not ask it again.
 *
 * The rules are bin/rc1-build.js's and server-files.ts's; keep the three in step:
 * - in-process whenever RC1_NO_SERVER=1, the first argument starts with "__", npm exec / npx
 *   launched the command, there is no server.json, its process (pid and start time) is not
 *   running, its socket is not a socket of this user's, the first frame is not the hello with
 *   server.json's token (nothing is sent before it), the server refuses, or it says nothing for
 *   2 s before it accepts;
 * - the engine identity is engineIdentity() of server-files.ts: the node executable this client
 *   would run, bin/rc1-build.js and every .js file of dist/, each as "inode size mtime-in-ns";
 * - frames both ways: 1 byte type (1 stdout, 2 stderr, 3 JSON), 4 bytes big-endian length, payload.
 *
 * Built by scripts/build.mjs into dist/rc1-client when a C compiler is there; bin/rc1-build (a
 * POSIX sh launcher) runs it when it exists, else node.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ACCEPT_TIMEOUT_MS 2000
#define FRAME_STDOUT 1
#define FRAME_STDERR 2
#define FRAME_JSON 3
/* What the JavaScript client gets from this one when a server was asked and refused. */
#define TRIED_VAR "RC1_CLIENT_SERVER_TRIED"

static int g_argc;
static char **g_argv;
static char g_dist[PATH_MAX]; /* the engine's dist/ (this executable's folder) */
static char g_node[PATH_MAX]; /* node on PATH, real path; "" when none */

/* ---------- a growing byte buffer ---------- */

typedef struct {
  char *p;
  size_t n, cap;
} Buf;

static void die_oom(void) {
  static const char m[] = "rc1-build: out of memory\n";
  (void)!write(2, m, sizeof m - 1);
  _exit(70);
}

static void buf_reserve(Buf *b, size_t more) {
  if (b->n + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + more) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) die_oom();
  b->p = p;
  b->cap = cap;
}

static void buf_add(Buf *b, const void *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

static void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_fmt(Buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) buf_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A JSON string: quotes, backslashes and control characters escaped; other bytes as they are
 * (the server decodes the payload as UTF-8, as node decodes the environment). */
static void buf_json_str(Buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  buf_add(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      buf_add(b, e, 2);
    } else if (c < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      buf_add(b, e, 6);
    } else
      buf_add(b, &s[i], 1);
  }
  buf_add(b, "\"", 1);
}

/* ---------- the in-process fallback ---------- */

/* Runs the command as the JavaScript client would: node bin/rc1-build.js ARGS. */
static void run_in_process(int server_tried) {
  char script[PATH_MAX];
  if (snprintf(script, sizeof script, "%s/../bin/rc1-build.js", g_dist) >= (int)sizeof script) _exit(70);
  char **args = calloc((size_t)g_argc + 2, sizeof *args);
  if (!args) die_oom();
  args[0] = "node";
  args[1] = script;
  for (int i = 1; i < g_argc; i++) args[i + 1] = g_argv[i];
  if (server_tried) setenv(TRIED_VAR, "1", 1);
  signal(SIGPIPE, SIG_DFL); /* an ignored signal would stay ignored across exec */
  if (g_node[0]) execv(g_node, args);
  execvp("node", args);
  fprintf(stderr, "rc1-build: cannot run node (%s): it must be on PATH\n", strerror(errno));
  _exit(127);
}

/* ---------- paths ---------- */

/* path.resolve(base, p) for absolute base: "." and ".." segments and repeated slashes removed. */
static void resolve_path(const char *base, const char *p, char *out, size_t cap) {
  char tmp[PATH_MAX * 2];
  if (p[0] == '/')
    snprintf(tmp, sizeof tmp, "%s", p);
  else
    snprintf(tmp, sizeof tmp, "%s/%s", base, p);
  size_t o = 0;
  out[0] = '\0';
  const char *s = tmp;
  while (*s) {
    while (*s == '/') s++;
    if (!*s) break;
    const char *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 1 && s[0] == '.') {
      /* nothing */
    } else if (len == 2 && s[0] == '.' && s[1] == '.') {
      while (o > 0 && out[o - 1] != '/') o--;
      if (o > 0) o--;
      out[o] = '\0';
    } else if (o + 1 + len < cap) {
      out[o++] = '/';
      memcpy(out + o, s, len);
      o += len;
      out[o] = '\0';
    }
    s += len;
  }
  if (o == 0) snprintf(out, cap, "/");
}

/* The `-C DIR` / `--directory DIR` / `--directory=DIR` / `-CDIR` of the command line, or NULL. */
static const char *directory_of(void) {
  const char *dir = NULL;
  for (int i = 1; i < g_argc; i++) {
    const char *a = g_argv[i];
    if (strcmp(a, "--") == 0) break;
    if ((strcmp(a, "-C") == 0 || strcmp(a, "--directory") == 0) && i + 1 < g_argc)
      dir = g_argv[++i];
    else if (strncmp(a, "--directory=", 12) == 0)
      dir = a + 12;
    else if (strncmp(a, "-C", 2) == 0 && a[2])
      dir = a + 2;
  }
  return dir;
}

/* The workspace root as workspace.ts's findRoot finds it: -C's directory, else the nearest folder
 * up from cwd with an rc1.build.ts, else cwd. */
static void root_of(const char *cwd, char *out, size_t cap) {
  const char *dir = directory_of();
  if (dir) {
    resolve_path(cwd, dir, out, cap);
    return;
  }
  char d[PATH_MAX];
  resolve_path("/", cwd, d, sizeof d);
  for (;;) {
    char f[PATH_MAX + 16];
    snprintf(f, sizeof f, "%s/rc1.build.ts", strcmp(d, "/") == 0 ? "" : d);
    if (access(f, F_OK) == 0) {
      snprintf(out, cap, "%s", d);
      return;
    }
    if (strcmp(d, "/") == 0) break;
    char *slash = strrchr(d, '/');
    if (slash == d)
      d[1] = '\0';
    else
      *slash = '\0';
  }
  resolve_path("/", cwd, out, cap);
}

/* node on PATH, as execvp and `#!/usr/bin/env node` find it, as a real path. */
static void find_node(void) {
  g_node[0] = '\0';
  const char *path = getenv("PATH");
  if (!path || !*path) return;
  const char *s = path;
  for (;;) {
    const char *e = strchr(s, ':');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char f[PATH_MAX];
    if (len == 0)
      snprintf(f, sizeof f, "node");
    else
      snprintf(f, sizeof f, "%.*s/node", (int)len, s);
    struct stat st;
    if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0) {
      if (!realpath(f, g_node)) g_node[0] = '\0';
      return;
    }
    if (!e) return;
    s = e + 1;
  }
}

/* ---------- a small JSON reader (server.json and the server's control frames) ---------- */

typedef struct {
  const char *s, *end;
} Json;

static void j_ws(Json *j) {
  while (j->s < j->end && (*j->s == ' ' || *j->s == '\n' || *j->s == '\r' || *j->s == '\t')) j->s++;
}

static void put_utf8(Buf *b, unsigned cp) {
  char u[4];
  if (cp < 0x80) {
    u[0] = (char)cp;
    buf_add(b, u, 1);
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3F));
    buf_add(b, u, 2);
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    buf_add(b, u, 3);
  } else {
    u[0] = (char)(0xF0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    buf_add(b, u, 4);
  }
}

static int hex4(const char *s, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    *v <<= 4;
    if (c >= '0' && c <= '9')
      *v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      *v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      *v |= (unsigned)(c - 'A' + 10);
    else
      return 0;
  }
  return 1;
}

/* A string at j->s into out (NUL-terminated); 0 when it is not a well-formed string. */
static int j_string(Json *j, Buf *out) {
  if (j->s >= j->end || *j->s != '"') return 0;
  j->s++;
  out->n = 0;
  while (j->s < j->end && *j->s != '"') {
    char c = *j->s++;
    if (c != '\\') {
      buf_add(out, &c, 1);
      continue;
    }
    if (j->s >= j->end) return 0;
    char e = *j->s++;
    switch (e) {
      case '"': case '\\': case '/': buf_add(out, &e, 1); break;
      case 'b': buf_add(out, "\b", 1); break;
      case 'f': buf_add(out, "\f", 1); break;
      case 'n': buf_add(out, "\n", 1); break;
      case 'r': buf_add(out, "\r", 1); break;
      case 't': buf_add(out, "\t", 1); break;
      case 'u': {
        unsigned cp;
        if (j->end - j->s < 4 || !hex4(j->s, &cp)) return 0;
        j->s += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && j->end - j->s >= 6 && j->s[0] == '\\' && j->s[1] == 'u') {
          unsigned lo;
          if (hex4(j->s + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
            j->s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
        }
        put_utf8(out, cp);
        break;
      }
      default: return 0;
    }
  }
  if (j->s >= j->end) return 0;
  j->s++;
  buf_add(out, "", 1);
  out->n--;
  return 1;
}

/* Skips any value; 0 when it is not well-formed. */
static int j_skip(Json *j, int depth) {
  Buf tmp = {0};
  j_ws(j);
  if (j->s >= j->end || depth > 64) return 0;
  char c = *j->s;
  int ok = 1;
  if (c == '"') {
    ok = j_string(j, &tmp);
  } else if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    j->s++;
    j_ws(j);
    if (j->s < j->end && *j->s == close) {
      j->s++;
    } else {
      for (;;) {
        if (c == '{') {
          j_ws(j);
          if (!j_string(j, &tmp)) { ok = 0; break; }
          j_ws(j);
          if (j->s >= j->end || *j->s != ':') { ok = 0; break; }
          j->s++;
        }
        if (!j_skip(j, depth + 1)) { ok = 0; break; }
        j_ws(j);
        if (j->s < j->end && *j->s == ',') { j->s++; continue; }
        if (j->s < j->end && *j->s == close) { j->s++; break; }
        ok = 0;
        break;
      }
    }
  } else {
    const char *st = j->s;
    while (j->s < j->end && (strchr("+-.eE", *j->s) || (*j->s >= '0' && *j->s <= '9') || (*j->s >= 'a' && *j->s <= 'z'))) j->s++;
    ok = j->s > st;
  }
  free(tmp.p);
  return ok;
}

/* The fields of a flat JSON object that this client reads. */
typedef struct {
  Buf t, token, socket, start_ticks, sig;
  int has_token, has_socket, start_ticks_null, has_start_ticks;
  double pid, code;
  int has_pid, has_code;
} Fields;

static void fields_free(Fields *f) {
  free(f->t.p);
  free(f->token.p);
  free(f->socket.p);
  free(f->start_ticks.p);
  free(f->sig.p);
}

/* Reads a JSON object's top-level fields; 0 when the text is not one JSON object. */
static int j_fields(const char *s, size_t n, Fields *f) {
  memset(f, 0, sizeof *f);
  Json j = {s, s + n};
  Buf key = {0};
  int ok = 0;
  j_ws(&j);
  if (j.s >= j.end || *j.s != '{') goto out;
  j.s++;
  j_ws(&j);
  if (j.s < j.end && *j.s == '}') { j.s++; ok = 1; goto out; }
  for (;;) {
    j_ws(&j);
    if (!j_string(&j, &key)) goto out;
    j_ws(&j);
    if (j.s >= j.end || *j.s != ':') goto out;
    j.s++;
    j_ws(&j);
    Buf *target = NULL;
    int *flag = NULL;
    if (strcmp(key.p, "t") == 0) target = &f->t;
    else if (strcmp(key.p, "token") == 0) { target = &f->token; flag = &f->has_token; }
    else if (strcmp(key.p, "socket") == 0) { target = &f->socket; flag = &f->has_socket; }
    else if (strcmp(key.p, "sig") == 0) target = &f->sig;
    else if (strcmp(key.p, "startTicks") == 0) {
      f->has_start_ticks = 1;
      if (j.end - j.s >= 4 && strncmp(j.s, "null", 4) == 0) {
        f->start_ticks_null = 1;
        j.s += 4;
        goto next;
      }
      target = &f->start_ticks;
    }
    if (target && j.s < j.end && *j.s == '"') {
      if (!j_string(&j, target)) goto out;
      if (flag) *flag = 1;
    } else if ((strcmp(key.p, "pid") == 0 || strcmp(key.p, "code") == 0) && j.s < j.end &&
               (*j.s == '-' || (*j.s >= '0' && *j.s <= '9'))) {
      /* Copied out first: a frame's payload is not NUL-terminated. */
      char num[40];
      size_t len = 0;
      while (j.s + len < j.end && len < sizeof num - 1 && strchr("+-.eE0123456789", j.s[len])) len++;
      memcpy(num, j.s, len);
      num[len] = '\0';
      char *e;
      double v = strtod(num, &e);
      if (e == num || (size_t)(e - num) != len) goto out;
      j.s += len;
      if (key.p[0] == 'p') { f->pid = v; f->has_pid = 1; }
      else { f->code = v; f->has_code = 1; }
    } else if (!j_skip(&j, 0))
      goto out;
  next:
    j_ws(&j);
    if (j.s < j.end && *j.s == ',') { j.s++; continue; }
    if (j.s < j.end && *j.s == '}') { j.s++; break; }
    goto out;
  }
  j_ws(&j);
  ok = j.s == j.end;
out:
  free(key.p);
  return ok;
}

/* ---------- the server's process, socket and identity ---------- */

static int read_file(const char *path, Buf *out, size_t max) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  out->n = 0;
  for (;;) {
    buf_reserve(out, 4096);
    ssize_t r = read(fd, out->p + out->n, 4096);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    out->n += (size_t)r;
    if (out->n > max) { close(fd); return 0; }
  }
  close(fd);
  buf_add(out, "", 1);
  out->n--;
  return 1;
}

/* Whether the process server.json names still runs (pid and start time, as process-identity.ts). */
static int alive(long pid, const Fields *info) {
  char f[64];
  snprintf(f, sizeof f, "/proc/%ld/stat", pid);
  Buf s = {0};
  if (!read_file(f, &s, 1 << 16)) {
    free(s.p);
    if (access("/proc/self/stat", F_OK) == 0) return 0;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM; /* no /proc: the pid is all there is */
  }
  char *rp = NULL;
  for (size_t i = 0; i < s.n; i++)
    if (s.p[i] == ')') rp = s.p + i;
  int ok = 0;
  if (rp && rp + 2 < s.p + s.n) {
    char *rest = rp + 2;
    char state = rest[0];
    /* rest split by ' ': index 0 is the state, index 19 the start time (field 22). */
    char *field = rest;
    for (int k = 0; k < 19 && field; k++) {
      field = strchr(field, ' ');
      if (field) field++;
    }
    ok = state != 'Z' && state != 'X';
    if (ok && info->has_start_ticks && !info->start_ticks_null) {
      size_t len = field ? strcspn(field, " \n") : 0;
      ok = field && len == info->start_ticks.n && memcmp(field, info->start_ticks.p, len) == 0;
    }
  }
  free(s.p);
  return ok;
}

/* "inode size mtime-in-ns" of a file (stat, links followed), or "missing". */
static void file_key(Buf *b, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    buf_str(b, "missing");
    return;
  }
  buf_fmt(b, "%llu %lld %lld", (unsigned long long)st.st_ino, (long long)st.st_size,
          (long long)st.st_mtim.tv_sec * 1000000000LL + (long long)st.st_mtim.tv_nsec);
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* engineIdentity() of server-files.ts for this client's engine. */
static void identity(Buf *b) {
  buf_fmt(b, "node %s ", g_node);
  if (g_node[0])
    file_key(b, g_node);
  else
    buf_str(b, "missing");
  char p[PATH_MAX + 64];
  snprintf(p, sizeof p, "%s/../bin/rc1-build.js", g_dist);
  buf_str(b, "\nbin ");
  file_key(b, p);
  DIR *d = opendir(g_dist);
  if (!d) return;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 3 || strcmp(e->d_name + len - 3, ".js") != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      names = realloc(names, cap * sizeof *names);
      if (!names) die_oom();
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_names);
  for (size_t i = 0; i < n; i++) {
    snprintf(p, sizeof p, "%s/%s", g_dist, names[i]);
    buf_fmt(b, "\n%s ", names[i]);
    file_key(b, p);
    free(names[i]);
  }
  free(names);
}

/* ---------- the served command ---------- */

static int g_sigpipe[2] = {-1, -1};

static void on_signal(int sig) {
  int saved = errno;
  unsigned char c = (unsigned char)sig;
  (void)!write(g_sigpipe[1], &c, 1);
  errno = saved;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    p += w;
    n -= (size_t)w;
  }
  return 1;
}

static void send_frame(int sock, int type, const char *p, size_t n) {
  unsigned char head[5] = {(unsigned char)type, (unsigned char)(n >> 24), (unsigned char)(n >> 16),
                           (unsigned char)(n >> 8), (unsigned char)n};
  if (write_all(sock, (const char *)head, 5)) write_all(sock, p, n);
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int stderr_columns(int *cols) {
  struct winsize w;
  if (!isatty(2) || ioctl(2, TIOCGWINSZ, &w) != 0) return 0;
  *cols = w.ws_col;
  return 1;
}

static void send_request(int sock, const char *cwd) {
  Buf b = {0};
  buf_str(&b, "{\"t\":\"run\",\"argv\":[");
  for (int i = 1; i < g_argc; i++) {
    if (i > 1) buf_add(&b, ",", 1);
    buf_json_str(&b, g_argv[i], strlen(g_argv[i]));
  }
  buf_str(&b, "],\"cwd\":");
  buf_json_str(&b, cwd, strlen(cwd));
  buf_str(&b, ",\"env\":{");
  int first = 1;
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || eq == *e) continue;
    if (!first) buf_add(&b, ",", 1);
    first = 0;
    buf_json_str(&b, *e, (size_t)(eq - *e));
    buf_add(&b, ":", 1);
    buf_json_str(&b, eq + 1, strlen(eq + 1));
  }
  int cols;
  mode_t mask = umask(0);
  umask(mask);
  buf_fmt(&b, "},\"stdoutTTY\":%s,\"stderrTTY\":%s,", isatty(1) ? "true" : "false", isatty(2) ? "true" : "false");
  if (stderr_columns(&cols))
    buf_fmt(&b, "\"columns\":%d,", cols);
  else
    buf_str(&b, "\"columns\":null,");
  buf_fmt(&b, "\"umask\":%u,\"identity\":", (unsigned)mask);
  Buf id = {0};
  identity(&id);
  buf_json_str(&b, id.p, id.n);
  free(id.p);
  buf_add(&b, "}", 1);
  send_frame(sock, FRAME_JSON, b.p, b.n);
  free(b.p);
}

/* Runs the command in the server; returns only when it must run in-process instead (1 when the
 * server was asked, 0 when nothing was sent). */
static int served(const Fields *info, long pid, const char *cwd) {
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return 0;
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (info->socket.n >= sizeof addr.sun_path) { close(sock); return 0; }
  memcpy(addr.sun_path, info->socket.p, info->socket.n);
  if (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) { close(sock); return 0; }

  if (pipe2(g_sigpipe, O_CLOEXEC | O_NONBLOCK) != 0) { close(sock); return 0; }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGWINCH, &sa, NULL);
  signal(SIGPIPE, SIG_IGN); /* a closed reader: output dropped, as in-process */

  int hello = 0, accepted = 0, forwarded = 0;
  long deadline = now_ms() + ACCEPT_TIMEOUT_MS;
  Buf in = {0};
  size_t off = 0;
  for (;;) {
    struct pollfd fds[2] = {{sock, POLLIN, 0}, {g_sigpipe[0], POLLIN, 0}};
    int timeout = -1;
    if (!accepted) {
      long left = deadline - now_ms();
      if (left <= 0) {
        fprintf(stderr, "rc1-build: the server (pid %ld) did not answer within %d s; running in-process\n", pid,
                ACCEPT_TIMEOUT_MS / 1000);
        close(sock);
        return 1;
      }
      timeout = (int)left;
    }
    int r = poll(fds, 2, timeout);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    /* The socket first: a signal that came in the same wake-up as 'accepted' is the build's. */
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      buf_reserve(&in, 65536);
      ssize_t k = read(sock, in.p + in.n, 65536);
      if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) break; /* closed */
      if (k > 0) in.n += (size_t)k;
      while (in.n - off >= 5) {
        const unsigned char *h = (const unsigned char *)in.p + off;
        size_t len = ((size_t)h[1] << 24) | ((size_t)h[2] << 16) | ((size_t)h[3] << 8) | h[4];
        if (in.n - off < 5 + len) break;
        int type = h[0];
        const char *payload = in.p + off + 5;
        off += 5 + len;
        if (!hello) {
          /* The first frame must be the hello with server.json's token; anything else is not our server. */
          Fields m;
          int ok = type == FRAME_JSON && j_fields(payload, len, &m) && m.t.p && strcmp(m.t.p, "hello") == 0 &&
                   m.has_token && m.token.n == info->token.n && memcmp(m.token.p, info->token.p, m.token.n) == 0;
          if (type == FRAME_JSON) fields_free(&m);
          if (!ok) {
            close(sock);
            return 0;
          }
          hello = 1;
          send_request(sock, cwd);
        } else if (type == FRAME_STDOUT)
          write_all(1, payload, len);
        else if (type == FRAME_STDERR)
          write_all(2, payload, len);
        else if (type == FRAME_JSON) {
          Fields m;
          if (!j_fields(payload, len, &m)) {
            fields_free(&m);
            continue;
          }
          const char *t = m.t.p ? m.t.p : "";
          if (strcmp(t, "accepted") == 0)
            accepted = 1;
          else if (strcmp(t, "refused") == 0) {
            fields_free(&m);
            close(sock);
            return 1;
          } else if (strcmp(t, "exit") == 0) {
            int code = m.has_code && m.code >= 0 && m.code <= 255 ? (int)m.code : 1;
            fields_free(&m);
            _exit(code);
          }
          fields_free(&m);
        }
      }
      /* What is left is the start of a frame: moved to the front, so the buffer holds at most one frame. */
      if (off > 0) {
        memmove(in.p, in.p + off, in.n - off);
        in.n -= off;
        off = 0;
      }
    }
    if (fds[1].revents & POLLIN) {
      unsigned char sigs[16];
      ssize_t k = read(g_sigpipe[0], sigs, sizeof sigs);
      for (ssize_t i = 0; i < k; i++) {
        int sig = sigs[i];
        if (sig == SIGWINCH) {
          int cols;
          if (hello && stderr_columns(&cols)) {
            char m[64];
            int len = snprintf(m, sizeof m, "{\"t\":\"columns\",\"columns\":%d}", cols);
            send_frame(sock, FRAME_JSON, m, (size_t)len);
          }
          continue;
        }
        /* Until the server has accepted nothing has run: the signal ends the client now. After
         * it, the first signal is the build's to handle; a second one ends this client at once. */
        if (!accepted || ++forwarded > 1) _exit(sig == SIGINT ? 130 : 143);
        const char *m = sig == SIGINT ? "{\"t\":\"signal\",\"sig\":\"SIGINT\"}" : "{\"t\":\"signal\",\"sig\":\"SIGTERM\"}";
        send_frame(sock, FRAME_JSON, m, strlen(m));
      }
    }
  }
  close(sock);
  if (!accepted) return hello;
  fprintf(stderr, "rc1-build: the server ended during the command (see .rc1/server.log)\n");
  _exit(1);
}

int main(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    self[n] = '\0';
  else if (!realpath(argv[0], self)) {
    fprintf(stderr, "rc1-build: the native client cannot find its own path\n");
    return 70;
  }
  snprintf(g_dist, sizeof g_dist, "%s", self);
  char *slash = strrchr(g_dist, '/');
  if (slash) *slash = '\0';
  find_node();

  const char *no_server = getenv("RC1_NO_SERVER");
  const char *npm_command = getenv("npm_command");
  const char *npm_event = getenv("npm_lifecycle_event");
  if ((no_server && strcmp(no_server, "1") == 0) || (argc > 1 && strncmp(argv[1], "__", 2) == 0) ||
      (npm_command && strcmp(npm_command, "exec") == 0) || (npm_event && strcmp(npm_event, "npx") == 0))
    run_in_process(0);

  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) run_in_process(0);
  char root[PATH_MAX];
  root_of(cwd, root, sizeof root);
  char file[PATH_MAX + 32];
  snprintf(file, sizeof file, "%s/.rc1/server.json", strcmp(root, "/") == 0 ? "" : root);
  Buf text = {0};
  if (!read_file(file, &text, 1 << 20)) run_in_process(0);
  Fields info;
  if (!j_fields(text.p, text.n, &info) || !info.has_socket || !info.has_pid || !info.has_token) run_in_process(0);
  long pid = (long)info.pid;
  /* A dead server's files are the JavaScript client's to remove: it finds them as this one did. */
  if ((double)pid != info.pid || pid <= 0 || !alive(pid, &info)) run_in_process(0);
  struct stat st;
  if (lstat(info.socket.p, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != getuid()) run_in_process(0);
  run_in_process(served(&info, pid, cwd));
  return 70;
}
