// probe: a WASI program that runs the file operations named in argv and prints one line per
// operation, "<op> <args> = ok [detail]" or "<op> <args> = <ERRNO NAME>", so a Go test can check
// what a real guest (wasi-libc over wazero) sees through a mount.
//
// Operations (arguments separated by ':'):
//   read:P          open P read-only, print up to 200 bytes of it
//   write:P:TEXT    open P write-only, create, truncate; write TEXT
//   append:P:TEXT   open P write-only, create, append; write TEXT
//   fill:P:N        create P and write N bytes in 4096-byte writes; print how many were written
//   openrw:P        open P read-write without creating it
//   creat:P         create P exclusively
//   mkdir:P  rmdir:P  unlink:P  rename:A:B  symlink:TARGET:P  link:A:B
//   readdir:P       print the names in P, sorted, without "." and ".."
//   stat:P  lstat:P print the type, and the size of what is not a directory
//   readlink:P      print the link's text
//   seekw:P:OFF     open P read-write, seek to OFF and write one byte
//   loop:P:N        open, read and close P N times (the benchmark's guest side)
//
// Build (from internal/wasifs): see the go:generate line in wasifs_test.go.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ename(int e) {
	switch (e) {
	case EACCES: return "EACCES";
	case EBADF: return "EBADF";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case EIO: return "EIO";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOENT: return "ENOENT";
	case ENOSPC: return "ENOSPC";
	case ENOSYS: return "ENOSYS";
	case ENOTCAPABLE: return "ENOTCAPABLE";
	case ENOTDIR: return "ENOTDIR";
	case ENOTEMPTY: return "ENOTEMPTY";
	case ENOTSUP: return "ENOTSUP";
	case EPERM: return "EPERM";
	case EROFS: return "EROFS";
	case EXDEV: return "EXDEV";
	case EDQUOT: return "EDQUOT";
	case EFBIG: return "EFBIG";
	}
	static char buf[32];
	snprintf(buf, sizeof buf, "errno%d", e);
	return buf;
}

static int fail(void) {
	printf("= %s\n", ename(errno));
	return 1;
}

// next splits s at the first ':' and returns what follows (or "" when there is none).
static char *next(char *s) {
	char *c = strchr(s, ':');
	if (!c) return s + strlen(s);
	*c = 0;
	return c + 1;
}

static int writeall(const char *p, int flags, const char *text) {
	int fd = open(p, O_WRONLY | O_CREAT | flags, 0644);
	if (fd < 0) return fail();
	size_t n = strlen(text);
	ssize_t w = write(fd, text, n);
	if (w < 0) { close(fd); return fail(); }
	close(fd);
	printf("= ok %zd\n", w);
	return 0;
}

static int cmp(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int op(char *arg) {
	char *a = next(arg);
	char *b = next(a);
	printf("%s %s%s%s ", arg, a, *b ? ":" : "", b);
	if (!strcmp(arg, "read")) {
		int fd = open(a, O_RDONLY);
		if (fd < 0) return fail();
		char buf[201];
		ssize_t n = read(fd, buf, 200);
		if (n < 0) { close(fd); return fail(); }
		buf[n] = 0;
		for (ssize_t i = 0; i < n; i++) if (buf[i] == '\n') buf[i] = '|';
		close(fd);
		printf("= ok %s\n", buf);
		return 0;
	}
	if (!strcmp(arg, "write")) return writeall(a, O_TRUNC, b);
	if (!strcmp(arg, "append")) return writeall(a, O_APPEND, b);
	if (!strcmp(arg, "fill")) {
		long want = atol(b), done = 0;
		int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) return fail();
		static char chunk[4096];
		memset(chunk, 'x', sizeof chunk);
		while (done < want) {
			size_t n = want - done < (long)sizeof chunk ? (size_t)(want - done) : sizeof chunk;
			ssize_t w = write(fd, chunk, n);
			if (w < 0) {
				int e = errno;
				close(fd);
				printf("= %s after %ld\n", ename(e), done);
				return 1;
			}
			done += w;
		}
		close(fd);
		printf("= ok %ld\n", done);
		return 0;
	}
	if (!strcmp(arg, "openrw") || !strcmp(arg, "creat")) {
		int fd = !strcmp(arg, "creat") ? open(a, O_RDWR | O_CREAT | O_EXCL, 0644) : open(a, O_RDWR);
		if (fd < 0) return fail();
		close(fd);
		printf("= ok\n");
		return 0;
	}
	if (!strcmp(arg, "seekw")) {
		int fd = open(a, O_RDWR);
		if (fd < 0) return fail();
		if (lseek(fd, atol(b), SEEK_SET) < 0 || write(fd, "y", 1) != 1) { int e = errno; close(fd); errno = e; return fail(); }
		close(fd);
		printf("= ok\n");
		return 0;
	}
	int r = -1;
	if (!strcmp(arg, "mkdir")) r = mkdir(a, 0755);
	else if (!strcmp(arg, "rmdir")) r = rmdir(a);
	else if (!strcmp(arg, "unlink")) r = unlink(a);
	else if (!strcmp(arg, "rename")) r = rename(a, b);
	else if (!strcmp(arg, "symlink")) r = symlink(a, b);
	else if (!strcmp(arg, "link")) r = link(a, b);
	if (!strcmp(arg, "mkdir") || !strcmp(arg, "rmdir") || !strcmp(arg, "unlink") || !strcmp(arg, "rename") ||
	    !strcmp(arg, "symlink") || !strcmp(arg, "link")) {
		if (r < 0) return fail();
		printf("= ok\n");
		return 0;
	}
	if (!strcmp(arg, "stat") || !strcmp(arg, "lstat")) {
		struct stat st;
		r = !strcmp(arg, "stat") ? stat(a, &st) : lstat(a, &st);
		if (r < 0) return fail();
		const char *t = S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" : S_ISLNK(st.st_mode) ? "symlink" : "other";
		if (S_ISDIR(st.st_mode)) printf("= ok dir\n"); // a directory's size depends on the host's file system
		else printf("= ok %s %lld\n", t, (long long)st.st_size);
		return 0;
	}
	if (!strcmp(arg, "readlink")) {
		char buf[256];
		ssize_t n = readlink(a, buf, sizeof buf - 1);
		if (n < 0) return fail();
		buf[n] = 0;
		printf("= ok %s\n", buf);
		return 0;
	}
	if (!strcmp(arg, "readdir")) {
		DIR *d = opendir(a);
		if (!d) return fail();
		char *names[256];
		int n = 0;
		struct dirent *e;
		errno = 0;
		while ((e = readdir(d)) && n < 256) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
			names[n++] = strdup(e->d_name);
		}
		if (errno) { closedir(d); return fail(); }
		closedir(d);
		qsort(names, n, sizeof *names, cmp);
		printf("= ok");
		for (int i = 0; i < n; i++) { printf(" %s", names[i]); free(names[i]); }
		printf("\n");
		return 0;
	}
	if (!strcmp(arg, "loop")) {
		long n = atol(b);
		char buf[512];
		for (long i = 0; i < n; i++) {
			int fd = open(a, O_RDONLY);
			if (fd < 0) return fail();
			if (read(fd, buf, sizeof buf) < 0) { close(fd); return fail(); }
			close(fd);
		}
		printf("= ok %ld\n", n);
		return 0;
	}
	printf("= unknown operation\n");
	return 2;
}

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		op(argv[i]);
		fflush(stdout);
	}
	return 0;
}
