package bundle

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/spec"
)

// Package limits. A package is untrusted input (an HTTP upload, say) that is read whole into
// memory before Install writes it, so these bound that memory, and the reader below enforces them
// while the bytes arrive: a .tar.gz is a compressed stream, and a megabyte of gzip can inflate
// to a gigabyte.
const (
	MaxPackageFiles     = 256
	maxPackageBytes     = 160 << 20
	MaxPackageFileBytes = 16 << 20 // SKILL.md and resources: the most the server serves of one resource
	// defaultPackageRatio is the most a .tar.gz may inflate, uncompressed bytes per compressed
	// byte. Skill packages are mostly WebAssembly, which gzip shrinks about 3:1, and text, about
	// 10:1; DEFLATE itself tops out near 1032:1, where bombs live. 100:1 leaves an order of
	// magnitude for unusual but honest content and stops a bomb at a tenth of its reach.
	defaultPackageRatio = 100
	// ratioAllowance is inflated output the ratio does not count, so a small archive (whose tar
	// headers and padding are mostly zeros) is never refused for its ratio.
	RatioAllowance = 1 << 20
	// maxFieldBytes bounds a form field that is not a file (the id).
	MaxFieldBytes = 4 << 10
	// tarEntryOverhead is what one tar entry may add to the stream besides its contents: its
	// header, padding, and PAX or GNU long-name records. It bounds the inflated stream as a
	// whole, which tar.Reader reads (and discards) more of than the files it returns.
	TarEntryOverhead = 16 << 10
)

// Limits bounds a skill package read by a [Reader]. A zero field is the default.
// The default MaxFiles and MaxBytes are what [Runtime.Install] accepts, and the module and
// manifest caps what the loader reads, so raising those only moves the refusal later.
type Limits struct {
	// MaxFiles bounds the entries: every tar entry (directories too) and every multipart part
	// (form fields too). Default 256.
	MaxFiles int
	// MaxBytes bounds the files' contents together. Default 160 MiB.
	MaxBytes int64
	// MaxModuleBytes bounds execute.wasm. Default: the default policy's modules.maxModuleBytes
	// (Runtime.PackageLimits gives the policy's own).
	MaxModuleBytes int64
	// MaxFileBytes bounds every other file. Default 16 MiB; a manifest is held to 1 MiB, what
	// the loader reads of one, whatever this says.
	MaxFileBytes int64
	// MaxRatio bounds how far a .tar.gz inflates: uncompressed bytes may be at most MaxRatio
	// times the compressed bytes read so far, plus 1 MiB. Default 100.
	MaxRatio int
}

func (l Limits) WithDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = MaxPackageFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = maxPackageBytes
	}
	if l.MaxModuleBytes <= 0 {
		l.MaxModuleBytes = wasmcheck.DefaultLimits.MaxModuleBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = MaxPackageFileBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = defaultPackageRatio
	}
	return l
}

// fileMax is the most bytes the file at package path name may hold.
func (l Limits) fileMax(name string) int64 {
	switch {
	case name == spec.ModuleFile:
		return l.MaxModuleBytes
	case spec.IsManifestFile(name):
		return min(l.MaxFileBytes, spec.MaxManifestBytes)
	}
	return l.MaxFileBytes
}

// tarFileMax is fileMax for a tar entry, whose one top-level directory ("greeter/execute.wasm") may
// yet be stripped: the larger of the two readings, since which applies is known only at the end.
func (l Limits) tarFileMax(name string) int64 {
	m := l.fileMax(name)
	if top, rest, ok := strings.Cut(name, "/"); ok && PackageDir(name) != top {
		m = max(m, l.fileMax(rest))
	}
	return m
}

// ErrTooLarge is matched by every [*LimitError].
var ErrTooLarge = errors.New("package too large")

// Limit names the bound a [*LimitError] crossed.
type Limit string

const (
	LimitFiles        Limit = "maxFiles"        // too many entries
	LimitBytes        Limit = "maxBytes"        // the files together are too large
	LimitFileBytes    Limit = "maxFileBytes"    // one file is too large (MaxModuleBytes for the module)
	LimitFieldBytes   Limit = "maxFieldBytes"   // a form field that is not a file is too large
	LimitRatio        Limit = "maxRatio"        // the .tar.gz inflates too far
	LimitArchiveBytes Limit = "maxArchiveBytes" // the inflated tar stream is too large for its entries
)

// LimitError is a package refused for crossing a bound, found while reading it.
type LimitError struct {
	Limit Limit
	// File is the package path (or form field) being read when the bound was crossed; empty when
	// the bound is the package's as a whole.
	File string
	// Got is how far the reading got: a count, or bytes (at least this many; reading stops at the
	// first byte over). Max is the bound; for LimitRatio, the inflated bytes allowed for the
	// Compressed bytes read so far.
	Got, Max   int64
	Compressed int64
}

func (e *LimitError) Error() string {
	where := "package"
	if e.File != "" {
		where = fmt.Sprintf("package file %q", e.File)
	}
	switch e.Limit {
	case LimitFiles:
		return fmt.Sprintf("package entry %q: more than %d entries (%s; files, directories and form fields count alike); put fewer files under resources/", e.File, e.Max, LimitFiles)
	case LimitBytes:
		return fmt.Sprintf("%s: the files add up to more than %d bytes (%s): a package holds at most that; make the resources smaller", where, e.Max, LimitBytes)
	case LimitFileBytes:
		return fmt.Sprintf("%s: at least %d bytes, more than the %d allowed for this file (%s); make it smaller", where, e.Got, e.Max, LimitFileBytes)
	case LimitFieldBytes:
		return fmt.Sprintf("%s: a form field of more than %d bytes (%s); only the id is read from plain fields, send files with a filename", where, e.Max, LimitFieldBytes)
	case LimitRatio:
		ratio := int64(0)
		if e.Compressed > 0 {
			ratio = (e.Max - RatioAllowance) / e.Compressed
		}
		return fmt.Sprintf("%s: %d compressed bytes inflate to more than %d (%s: at most %d to 1, plus 1 MiB): refused as a decompression bomb; send the files uncompressed as multipart/form-data", where, e.Compressed, e.Max, LimitRatio, ratio)
	case LimitArchiveBytes:
		return fmt.Sprintf("%s: the .tar.gz inflates to more than %d bytes, more than its entries can hold (%s)", where, e.Max, LimitArchiveBytes)
	}
	return fmt.Sprintf("%s: %d is more than %d (%s)", where, e.Got, e.Max, e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// Reader reads a skill package from multipart parts or a .tar.gz into memory, refusing it
// as soon as it crosses a bound of its [Limits]: it counts entries before reading them,
// checks a tar header's declared size before reading its body, and grows a file's buffer only as
// its bytes arrive, so it holds at most MaxBytes plus the spare half of one file's buffer. It
// does not check names beyond what a reader must (tar entry types); [Runtime.Install] checks
// paths. The zero value is not usable: use [NewReader].
type Reader struct {
	l       Limits
	files   map[string][]byte
	entries int
	total   int64
}

// NewReader returns an empty reader within l (zero fields: the defaults).
func NewReader(l Limits) *Reader {
	return &Reader{l: l.WithDefaults(), files: map[string][]byte{}}
}

// Files returns the files read so far, by package path. The map is the reader's own.
func (p *Reader) Files() map[string][]byte { return p.files }

// entry counts one entry against MaxFiles.
func (p *Reader) entry(name string) error {
	p.entries++
	if p.entries > p.l.MaxFiles {
		return &LimitError{Limit: LimitFiles, File: name, Got: int64(p.entries), Max: int64(p.l.MaxFiles)}
	}
	return nil
}

// Add reads one file, a multipart part, named by its package path ("skill.json",
// "resources/a.md").
//
// # Errors
//
// A *LimitError (errors.Is ErrTooLarge), or r's error.
func (p *Reader) Add(name string, r io.Reader) error {
	if err := p.entry(name); err != nil {
		return err
	}
	data, err := p.read(name, r, p.l.fileMax(name), -1)
	if err != nil {
		return err
	}
	p.files[name] = data
	return nil
}

// AddField reads a form field that is not a file (such as "id"), of at most 4 KiB, and counts it
// as an entry.
func (p *Reader) AddField(name string, r io.Reader) ([]byte, error) {
	if err := p.entry(name); err != nil {
		return nil, err
	}
	data, err := readCapped(r, MaxFieldBytes, -1)
	if errors.Is(err, errOverCap) {
		return nil, &LimitError{Limit: LimitFieldBytes, File: name, Got: int64(len(data)), Max: MaxFieldBytes}
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// AddTarGz reads a .tar.gz whose regular files are the package. Directories are skipped (but
// counted); any other entry type (links, devices) is refused. A leading "./" is dropped, and one
// top-level directory common to all files ("greeter/skill.json") is stripped.
//
// # Errors
//
// A *LimitError (errors.Is ErrTooLarge); a *ManifestError for an entry that is not
// a regular file; otherwise the gzip, tar or reading error, wrapped.
func (p *Reader) AddTarGz(r io.Reader) error {
	in := &countReader{r: r}
	gz, err := gzip.NewReader(in)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	g := &inflateGuard{r: gz, in: in, ratio: int64(p.l.MaxRatio),
		max: p.l.MaxBytes + int64(p.l.MaxFiles+1)*TarEntryOverhead}
	tr := tar.NewReader(g)
	var added []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return tarErr(err, g.file)
		}
		name := strings.TrimPrefix(h.Name, "./")
		g.file = name
		if err := p.entry(name); err != nil {
			return err
		}
		if dir := strings.TrimSuffix(name, "/"); !CleanPath(dir) && !(h.Typeflag == tar.TypeDir && (dir == "" || dir == ".")) {
			return &spec.ManifestError{Path: h.Name, Msg: "not a clean relative path (absolute, with \"..\", or unclean)",
				Hint: "archive the package's files by their paths in it"}
		}
		if _, dup := p.files[name]; dup {
			// Two entries of one name: which one a tool extracts is its own choice, so which
			// content was checked would be too.
			return &spec.ManifestError{Path: h.Name, Msg: "in the archive twice", Hint: "archive each file once"}
		}
		switch h.Typeflag {
		case tar.TypeDir: // a header only: tar gives a directory no body
			g.file = ""
			continue
		case tar.TypeReg:
		default:
			return &spec.ManifestError{Path: h.Name, Msg: "only regular files are allowed in a package (no links or devices)",
				Hint: "archive the files themselves"}
		}
		data, err := p.read(name, tr, p.l.tarFileMax(name), h.Size)
		if err != nil {
			return tarErr(err, name)
		}
		g.file = "" // tar's own reads until the next entry are no file's
		added = append(added, name)
		p.files[name] = data
	}
	// Each file was read under the larger of its two possible caps; now its name is final.
	for _, name := range p.stripTop(added) {
		if n := int64(len(p.files[name])); n > p.l.fileMax(name) {
			return &LimitError{Limit: LimitFileBytes, File: name, Got: n, Max: p.l.fileMax(name)}
		}
	}
	return nil
}

// tarErr passes a limit error through as it is and wraps anything else.
func tarErr(err error, file string) error {
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	if file != "" {
		return fmt.Errorf("tar, after %q: %w", file, err)
	}
	return fmt.Errorf("tar: %w", err)
}

// stripTop drops one top-level directory common to all of names ("greeter/"), as a package archived
// as its directory has; a top-level resources/, lib/ or scripts/ is the package's own. It returns
// the names as they now are.
func (p *Reader) stripTop(names []string) []string {
	var top string
	for _, name := range names {
		first, _, found := strings.Cut(name, "/")
		if !found || (top != "" && first != top) {
			return names
		}
		top = first
	}
	if top == "" || PackageDir(top+"/") != "" {
		return names
	}
	out := make([]string, len(names))
	for i, name := range names {
		data := p.files[name]
		delete(p.files, name)
		out[i] = strings.TrimPrefix(name, top+"/")
		p.files[out[i]] = data
	}
	return out
}

// read reads one file of at most fileMax bytes within what MaxBytes leaves; declared is the size
// a tar header announces (-1: unknown), checked before any byte is read.
func (p *Reader) read(name string, r io.Reader, fileMax, declared int64) ([]byte, error) {
	if declared > fileMax {
		return nil, &LimitError{Limit: LimitFileBytes, File: name, Got: declared, Max: fileMax}
	}
	left := p.l.MaxBytes - p.total
	if declared > left {
		return nil, &LimitError{Limit: LimitBytes, File: name, Got: p.total + declared, Max: p.l.MaxBytes}
	}
	data, err := readCapped(r, min(fileMax, left), declared)
	switch {
	case errors.Is(err, errOverCap) && fileMax <= left:
		return nil, &LimitError{Limit: LimitFileBytes, File: name, Got: int64(len(data)), Max: fileMax}
	case errors.Is(err, errOverCap):
		return nil, &LimitError{Limit: LimitBytes, File: name, Got: p.total + int64(len(data)), Max: p.l.MaxBytes}
	case err != nil:
		return nil, err
	}
	p.total += int64(len(data))
	return data, nil
}

// errOverCap is readCapped's "more than max".
var errOverCap = errors.New("over the cap")

// readCapped reads r to its end, at most max bytes; more is errOverCap. The buffer starts small
// and doubles as data arrives, up to hint (a declared size, -1 if none) and max+1: a size
// announced is never allocated before the bytes come, and the allocations add up to about twice
// what was read (three times when the result is trimmed to its size).
func readCapped(r io.Reader, max, hint int64) ([]byte, error) {
	const first = 512
	size := int64(first)
	if hint >= 0 {
		size = min(size, hint)
	}
	buf := make([]byte, 0, min(size, max)+1)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > max {
				return buf, errOverCap
			}
			grow := int64(cap(buf)) * 2
			if hint >= 0 && int64(len(buf)) < hint {
				grow = min(grow, hint+1) // room to see the end without another doubling
			}
			grow = min(grow, max+1)
			nb := make([]byte, len(buf), grow)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return buf, errOverCap
		}
		if err == io.EOF {
			if slack := cap(buf) - len(buf); slack > 4<<10 && slack > len(buf)/4 {
				buf = append([]byte(nil), buf...) // what is kept is what was sent, not the doubling's spare half
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// countReader counts the bytes read through it: the compressed bytes gzip has consumed.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// inflateGuard sits between gzip and tar and fails the read that inflates too far: past ratio
// times the compressed bytes consumed (plus an allowance), or past max in all. It fails inside
// tar's own reads too (headers, skipped bodies), where no file is being read.
type inflateGuard struct {
	r     io.Reader
	in    *countReader
	ratio int64
	max   int64
	out   int64
	file  string // the entry being read, for the error
}

func (g *inflateGuard) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	g.out += int64(n)
	if allowed := g.ratio*g.in.n + RatioAllowance; g.out > allowed {
		return n, &LimitError{Limit: LimitRatio, File: g.file, Got: g.out, Max: allowed, Compressed: g.in.n}
	}
	if g.out > g.max {
		return n, &LimitError{Limit: LimitArchiveBytes, Got: g.out, Max: g.max}
	}
	return n, err
}
