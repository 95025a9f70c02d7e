package skillmd

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/internal/fileid"
)

// The per-skill limits of the MCP Skills extension, which every conforming host accepts: a
// server should not publish a skill with more files, or more bytes in all, and a [Publisher]
// does not.
const (
	MaxPublishedFiles = 512
	MaxPublishedBytes = 16 << 20
)

// InstructionsName is the name a published skill's instructions have, whatever the case of the
// file on disk (Skillbox also reads skill.md).
const InstructionsName = "SKILL.md"

// ErrUnpublishable is matched by the [*PublishError] of a skill that the formats which publish
// skills with digests cannot carry.
var ErrUnpublishable = errors.New("skillmd: not publishable")

// PublishError says why a skill is not published. Reason names files relative to the skill's
// directory, never a host path, so it can be shown to a remote client.
type PublishError struct {
	Reason string
	Err    error // the cause, when there is one
}

func (e *PublishError) Error() string { return "not published as an Agent Skill: " + e.Reason }

// Is reports whether target is [ErrUnpublishable].
func (e *PublishError) Is(target error) bool { return target == ErrUnpublishable }

// Unwrap returns the cause.
func (e *PublishError) Unwrap() error { return e.Err }

// File is one file of a published skill.
type File struct {
	// Path is slash-separated and relative to the skill's directory; the instructions are
	// always InstructionsName.
	Path string
	// Size is the file's length in bytes, and Digest "sha256:<hex>" of those bytes.
	Size   int64
	Digest string
	// Executable says the file's mode has an execute bit (an archive keeps it).
	Executable bool
}

// Package is a skill as the formats that publish skills with digests describe it: the MCP
// Skills extension (skills/list, skills/get) and the /.well-known/agent-skills index.
type Package struct {
	// Name is the frontmatter's name, and Frontmatter the whole frontmatter ([Frontmatter]).
	Name        string
	Frontmatter map[string]any
	// Files are the instructions first, then the files [ListResources] finds, in its order.
	Files []File
	// Digest identifies Files: the sha256 of one line "<path>\x00<hex>\n" per file, sorted by
	// path, the line of an executable file ending "\x00x" instead. It changes whenever a file,
	// the set of files or an execute bit does, so it keys what is derived from the files (an
	// archive of them).
	Digest string

	instructions string // the instructions' file name in the skill's directory
}

// Size is the sum of the files' sizes.
func (p *Package) Size() int64 {
	var n int64
	for _, f := range p.Files {
		n += f.Size
	}
	return n
}

// Publisher reads skills into Packages, remembering each file's digest by the file's identity
// (size, modification time, mode and inode) so that publishing an unchanged skill again reads
// nothing but its directory listing and SKILL.md. It reads the files as they are on disk at each
// call, like the resources a client then reads, so a Package never describes an older version
// than the one served. The zero value is ready to use; it is safe for concurrent use.
type Publisher struct {
	mu    sync.Mutex
	files map[string]cachedFile // by skill directory + "\x00" + path
}

type cachedFile struct {
	size, mtime int64
	mode        fs.FileMode
	ino         uint64
	sum         string
}

// maxCachedFiles bounds the memory of a Publisher: past it, the cache starts over.
const maxCachedFiles = 1 << 17

// Publish reads the skill at dir for publishing under name. instructions is the instructions'
// file name in dir ("SKILL.md", or "skill.md" when that is what the skill has); id is the name
// the skill is addressed by (its Skillbox id, the last segment of its URI).
//
// A skill is published when its SKILL.md has frontmatter that a strict YAML reader takes
// ([Frontmatter]), its name is a valid Agent Skills name ([ValidName]) equal to id (the Agent
// Skills specification wants the name to be the directory's; the extension wants it to be the
// URI's last segment), its description is at most [MaxDescription] characters, and it has
// at most [MaxPublishedFiles] files of at most [MaxPublishedBytes] in all, each of which can be
// read.
//
// # Errors
//
// A [*PublishError] (matching [ErrUnpublishable]) saying which rule the skill breaks; the
// [*ResourceError] of ReadResource when the skill's directory or SKILL.md cannot be read.
func (p *Publisher) Publish(dir, instructions, id string) (*Package, error) {
	data, err := ReadResource(dir, instructions, MaxPublishedBytes)
	if err != nil {
		var re *ResourceError
		if errors.As(err, &re) && re.Kind == ErrTooLarge {
			return nil, &PublishError{Reason: fmt.Sprintf("%s is larger than the %d bytes a skill may have in all", instructions, MaxPublishedBytes), Err: err}
		}
		return nil, err
	}
	front, err := Frontmatter(InstructionsName, data)
	if err != nil {
		return nil, &PublishError{Reason: err.Error(), Err: err}
	}
	name := front["name"].(string)
	desc := front["description"].(string)
	switch {
	case !ValidName(name):
		return nil, &PublishError{Reason: fmt.Sprintf("the name %q is not a valid Agent Skills name (1-%d lowercase letters, digits and single hyphens, not at either end)", name, MaxName)}
	case name != id:
		return nil, &PublishError{Reason: fmt.Sprintf("the name %q differs from the skill's id %q; the Agent Skills specification wants the name to be the directory's", name, id)}
	case utf8.RuneCountInString(desc) > MaxDescription:
		return nil, &PublishError{Reason: fmt.Sprintf("the description is %d characters, more than the %d allowed", utf8.RuneCountInString(desc), MaxDescription)}
	}
	paths, err := ListResources(dir, MaxPublishedFiles)
	if err != nil {
		return nil, err
	}
	if len(paths)+1 > MaxPublishedFiles {
		return nil, &PublishError{Reason: fmt.Sprintf("it has more than the %d files a skill may have", MaxPublishedFiles)}
	}
	pkg := &Package{Name: name, Frontmatter: front, Files: make([]File, 0, len(paths)+1), instructions: instructions}
	sum := sha256.Sum256(data)
	st, err := statIn(dir, instructions)
	if err != nil {
		return nil, err
	}
	pkg.Files = append(pkg.Files, File{Path: InstructionsName, Size: int64(len(data)), Digest: digestPrefix + hex.EncodeToString(sum[:]), Executable: st.Mode()&0o111 != 0})
	budget := MaxPublishedBytes - int64(len(data))
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, osError(".", err)
	}
	defer root.Close()
	for _, rel := range paths {
		f, err := p.file(root, dir, rel, budget)
		if err != nil {
			return nil, err
		}
		budget -= f.Size
		pkg.Files = append(pkg.Files, f)
	}
	pkg.Digest = packageDigest(pkg.Files)
	return pkg, nil
}

const digestPrefix = "sha256:"

// statIn is the Stat of dir/rel, through an os.Root.
func statIn(dir, rel string) (fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, osError(".", err)
	}
	defer root.Close()
	st, err := root.Stat(rel)
	if err != nil {
		return nil, osError(rel, err)
	}
	return st, nil
}

// file digests one file of the skill, from the cache when the file is the one it was taken of;
// budget is how many bytes the skill may still have.
func (p *Publisher) file(root *os.Root, dir, rel string, budget int64) (File, error) {
	tooLarge := &PublishError{Reason: fmt.Sprintf("its files are larger than the %d bytes a skill may have in all", MaxPublishedBytes)}
	// O_NONBLOCK: a FIFO put in place of a listed file must not block the open.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return File{}, &PublishError{Reason: fmt.Sprintf("%s cannot be read: %s", rel, osError(rel, err).Msg), Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return File{}, &PublishError{Reason: fmt.Sprintf("%s cannot be read", rel), Err: err}
	case !st.Mode().IsRegular():
		return File{}, &PublishError{Reason: fmt.Sprintf("%s is not a regular file", rel)}
	case st.Size() > budget:
		return File{}, tooLarge
	}
	out := File{Path: rel, Size: st.Size(), Executable: st.Mode()&0o111 != 0}
	key := dir + "\x00" + rel
	id := cachedFile{size: st.Size(), mtime: st.ModTime().UnixNano(), mode: st.Mode(), ino: fileid.Inode(st)}
	p.mu.Lock()
	c, ok := p.files[key]
	p.mu.Unlock()
	if ok && c.size == id.size && c.mtime == id.mtime && c.mode == id.mode && c.ino == id.ino {
		out.Digest = c.sum
		return out, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, budget+1))
	switch {
	case err != nil:
		return File{}, &PublishError{Reason: fmt.Sprintf("%s cannot be read", rel), Err: err}
	case n > budget:
		return File{}, tooLarge
	case n != st.Size():
		return File{}, &PublishError{Reason: fmt.Sprintf("%s changed while it was read", rel)}
	}
	out.Digest = digestPrefix + hex.EncodeToString(h.Sum(nil))
	id.sum = out.Digest
	p.mu.Lock()
	if p.files == nil || len(p.files) >= maxCachedFiles {
		p.files = map[string]cachedFile{}
	}
	p.files[key] = id
	p.mu.Unlock()
	return out, nil
}

// packageDigest is the skill-level digest of files (see [Package.Digest]).
func packageDigest(files []File) string {
	sorted := slices.SortedFunc(slices.Values(files), func(a, b File) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	h := sha256.New()
	for _, f := range sorted {
		line := f.Path + "\x00" + f.Digest[len(digestPrefix):]
		if f.Executable {
			line += "\x00x"
		}
		io.WriteString(h, line+"\n")
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil))
}
