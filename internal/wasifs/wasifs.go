// Package wasifs mounts host directories into a WASI guest so that nothing the guest names can
// reach outside them. wazero's own directory mounts join the guest's path to the host directory
// and let the kernel resolve it, so a symlink that a skill package ships (`data -> /etc`) is
// followed out of the mount. Here every path is resolved by [os.Root] instead: one component at a
// time, relative to an open directory, with each symlink checked before it is followed, so a
// symlink that leaves the root (absolute, through "..", through a chain or a symlinked
// directory) is refused, and a rename or a swapped directory cannot race the check.
//
// Symlinks whose targets stay inside the root are followed: skill packages and vendored
// libraries use them (`lib/current -> v2`), and following one cannot reach anything the mount
// does not already expose. The guest cannot create symlinks or hard links at all, so the only
// symlinks it meets are the ones the host put there.
//
// A writable mount has a byte budget and a file budget; crossing either fails the guest's call
// and is recorded for the host ([FS.Usage]). FIFOs, devices and sockets inside a mount are
// refused on open: opening a FIFO would block the host thread until a writer appears.
//
// # Notes
//
//   - The guest sees a crossed budget as EIO. wazero v1.12.0's [sys.Errno] has no ENOSPC or
//     EDQUOT, and maps every errno it does not know to EIO, so no FS can hand the guest a
//     better one; the host reads the reason from [FS.Usage].
//   - Hard links that the host put inside a mount are the files they name: a hard link is
//     indistinguishable from the file, and making one to a file outside needs the host's hand.
//   - Like [os.Root], this does not stop bind mounts or mount points inside the root.
package wasifs

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/tetratelabs/wazero/experimental/sys"
)

// ErrBudget is matched (errors.Is) by the error [FS.Usage] reports once the guest has tried to
// write more bytes or create more files than its mount's budget allows.
var ErrBudget = errors.New("write budget of the mount exceeded")

// ErrOptions is matched by the error of [Dir] and [PrivateTmp] for options they cannot honour.
var ErrOptions = errors.New("invalid mount options")

// Options configure one mount. The zero value is a read-only mount.
type Options struct {
	// Writable lets the guest create, write, truncate, rename and remove entries in the mount.
	// Without it every mutation fails with EROFS, as on a read-only file system.
	Writable bool
	// MaxBytes bounds the bytes the guest may write through the mount in its run, all files
	// together: every byte written counts, an overwrite too, and so does growth by truncate or
	// allocate. No file can be made longer than MaxBytes, holes included. Required (> 0) when
	// Writable: there is no unlimited.
	MaxBytes int64
	// MaxFiles bounds the files and directories the guest may create in its run. Removing one
	// does not give its place back, so a loop of create and unlink ends too. Required (> 0)
	// when Writable.
	MaxFiles int64
	// MaxFileBytes, when positive, bounds each file's size (holes included) below MaxBytes: a
	// write, a seek for writing or a truncate past it fails like a crossed MaxBytes, naming
	// MaxFileBytes. Zero means MaxBytes alone bounds a file. For a mount whose files the host
	// collects after the run, so that no file is larger than it will collect.
	MaxFileBytes int64
}

// fileMax is the largest a file may be made, and the Options field that says so.
func (o Options) fileMax() (int64, string) {
	if o.MaxFileBytes > 0 && o.MaxFileBytes < o.MaxBytes {
		return o.MaxFileBytes, "MaxFileBytes"
	}
	return o.MaxBytes, "MaxBytes"
}

// validate reports why o cannot configure a mount of root, naming the field and the fix.
func (o Options) validate(root string) error {
	if !o.Writable {
		if o.MaxBytes != 0 || o.MaxFiles != 0 || o.MaxFileBytes != 0 {
			return fmt.Errorf("mount %q: Options.MaxBytes and MaxFiles are set but Writable is not: set Writable or drop the budget: %w", root, ErrOptions)
		}
		return nil
	}
	if o.MaxBytes <= 0 {
		return fmt.Errorf("mount %q: Options.MaxBytes is %d: a writable mount needs a positive byte budget: %w", root, o.MaxBytes, ErrOptions)
	}
	if o.MaxFiles <= 0 {
		return fmt.Errorf("mount %q: Options.MaxFiles is %d: a writable mount needs a positive file budget: %w", root, o.MaxFiles, ErrOptions)
	}
	if o.MaxFileBytes < 0 {
		return fmt.Errorf("mount %q: Options.MaxFileBytes is %d: leave it 0 or make it positive: %w", root, o.MaxFileBytes, ErrOptions)
	}
	return nil
}

// Usage is what the guest has spent of a mount's budget.
type Usage struct {
	// BytesWritten counts the bytes written and the growth by truncate.
	BytesWritten int64
	// FilesCreated counts the files and directories created.
	FilesCreated int64
	// Exceeded is nil, or the first refusal for a crossed budget (matches [ErrBudget], and is a
	// [*BudgetError] naming the guest path and the limit).
	Exceeded error
}

// BudgetError says which budget a guest call crossed.
type BudgetError struct {
	// Path is the guest path, relative to the mount, of the write or create refused.
	Path string
	// Field is the Options field whose limit was reached: "MaxBytes" or "MaxFiles".
	Field string
	// Limit is that field's value.
	Limit int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%q: the mount's Options.%s (%d) is spent; raise it or write less: %v", e.Path, e.Field, e.Limit, ErrBudget)
}

// Unwrap makes a BudgetError match ErrBudget.
func (e *BudgetError) Unwrap() error { return ErrBudget }

// FS is a host directory mounted into a guest. It implements wazero's experimental sys.FS;
// mount it with experimental/sysfs.FSConfig.WithSysFSMount. Close it after the run.
type FS struct {
	sys.UnimplementedFS

	root *os.Root
	opts Options

	mu     sync.Mutex // guards the counters below; a guest's calls are serial but mounts may be shared
	bytes  int64
	files  int64
	exceed error
}

var _ sys.FS = (*FS)(nil)

// Dir mounts the host directory root. Every guest path resolves inside root; see the package
// documentation for what is refused and why.
//
// # Errors
//
// [ErrOptions] when opts is not valid (a writable mount without a budget); the error of
// [os.OpenRoot] when root is not a directory that can be opened.
func Dir(root string, opts Options) (*FS, error) {
	if err := opts.validate(root); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("mount %q: %w", root, err)
	}
	return &FS{root: r, opts: opts}, nil
}

// Close releases the mount's directory handle. The guest's calls after Close fail with EBADF.
func (f *FS) Close() error { return f.root.Close() }

// Usage reports what the guest has spent of the mount's budget so far.
func (f *FS) Usage() Usage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Usage{BytesWritten: f.bytes, FilesCreated: f.files, Exceeded: f.exceed}
}

// takeBytes grants up to n bytes of the byte budget for a write to path (all n or none when
// all is set) and returns how many; zero means the budget is spent, which is recorded.
func (f *FS) takeBytes(path string, n int64, all bool) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	left := f.opts.MaxBytes - f.bytes
	if n > left {
		if all {
			n = 0
		} else {
			n = left
		}
	}
	if n <= 0 {
		f.refuse(path, "MaxBytes", f.opts.MaxBytes)
		return 0
	}
	f.bytes += n
	return n
}

// refuseSize records a write to path refused because the file would pass fileMax.
func (f *FS) refuseSize(path string) sys.Errno {
	limit, field := f.opts.fileMax()
	f.mu.Lock()
	f.refuse(path, field, limit)
	f.mu.Unlock()
	return errBudget
}

// giveBytes returns n granted bytes that were not written.
func (f *FS) giveBytes(n int64) {
	if n <= 0 {
		return
	}
	f.mu.Lock()
	f.bytes -= n
	f.mu.Unlock()
}

// takeFile grants one entry of the file budget for creating path, or records the refusal.
func (f *FS) takeFile(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files >= f.opts.MaxFiles {
		f.refuse(path, "MaxFiles", f.opts.MaxFiles)
		return false
	}
	f.files++
	return true
}

// giveFile returns a granted entry whose create failed.
func (f *FS) giveFile() {
	f.mu.Lock()
	f.files--
	f.mu.Unlock()
}

// refuse records the first crossed budget; f.mu is held.
func (f *FS) refuse(path, field string, limit int64) {
	if f.exceed == nil {
		f.exceed = &BudgetError{Path: path, Field: field, Limit: limit}
	}
}

// errBudget is what the guest sees for a crossed budget (see the package Notes).
const errBudget = sys.EIO
