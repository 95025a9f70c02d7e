// Package bundle is a skill package as it travels: the tree digest that names a version of a
// skill, the reader that takes an upload (files, multipart parts, a tar.gz) within bounds that
// no archive can cross, the signed bundle format (pack, read, verify, sign, keys), and the one
// check that decides whether a package may be installed. It is a leaf: the CLI packs and signs,
// and a store reads bundles, without linking the engine.
package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/spec"
)

// A bundle is a skill as one file that can be copied, signed and installed elsewhere: a .tar.gz
// whose entries are, in this order,
//
//	.bundle/manifest.json            what the bundle holds (Manifest), as JSON
//	<the skill's files>              sorted by path, byte order
//	.bundle/signatures/<hex>.sig     zero or more ed25519 signatures, by public key (sign.go)
//
// The files are exactly those the skill's tree digest covers (tree.go): every regular file
// except hidden ones and src/. So a bundle is a version: its manifest's digest is the digest the
// registry gives the installed skill, and the bundle's own entries (hidden, under .bundle/) never
// collide with a skill's file nor change its digest.
//
// Why .tar.gz and not zip: it is the one archive the runtime already reads as untrusted input,
// bounded while it streams (package.go), so an HTTP upload of a bundle and `skillbox install`
// read it through the same code; a tar stream has one directory of entries, where a zip has two
// (local headers and the central directory) that can disagree; and tar, gzip and sha256sum are
// enough to check one by hand (docs/bundles.md).
//
// Every tar header is written the same way (mode 0644, time 0, no owner, uid and gid 0), and gzip
// with no name and time 0, so packing the same tree twice gives the same bytes. What is signed is
// the manifest, not the archive's bytes, so another compressor would not break a signature.
const (
	// ManifestPath is the manifest's entry.
	ManifestPath = ".bundle/manifest.json"
	// Format is the manifest's format field.
	Format = "skillbox-bundle/v1"
	// bundleDir holds the bundle's own entries.
	bundleDir = ".bundle/"
	// bundleSigDir holds the signatures.
	SigDir = ".bundle/signatures/"
	// maxBundleSignatures bounds the signatures a bundle may carry.
	maxBundleSignatures = 16
)

// Manifest lists a bundle's files and the skill's tree digest.
type Manifest struct {
	// Format is the constant Format.
	Format string `json:"format"`
	// Skill is the skill's id: the directory it was packed from, and the one it installs as.
	Skill string `json:"skill"`
	// Digest is the tree digest of Files ("sha256:<hex>"), the version's identity.
	Digest string `json:"digest"`
	// Files are the skill's files, sorted by path.
	Files []File `json:"files"`
}

// File is one file of a bundle.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ErrInvalid is matched by every *Error: a bundle whose contents are not what its
// manifest says, or whose signature does not verify (tampered), or that is malformed.
var ErrInvalid = errors.New("invalid bundle")

// Error is one problem of a bundle: the entry (a file, the manifest, a signature), what is
// wrong and how to fix it.
type Error struct {
	Entry string
	Msg   string
	Hint  string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("bundle entry %q: %s", e.Entry, e.Msg)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Bundle is a bundle read into memory and checked: every file is the one its manifest lists, and
// the manifest's digest is the files' tree digest. Its signatures are read but not yet checked
// (see [Bundle.Verify]).
type Bundle struct {
	manifest     Manifest
	manifestData []byte
	files        map[string][]byte
	sigs         map[string][]byte // by the signing key's hex
}

// Manifest returns the bundle's manifest (its Files are a copy).
func (b *Bundle) Manifest() Manifest {
	m := b.manifest
	m.Files = slices.Clone(m.Files)
	return m
}

// Files returns a copy of the skill's files, by path: what Install writes.
func (b *Bundle) Files() map[string][]byte {
	out := make(map[string][]byte, len(b.files))
	for k, v := range b.files {
		out[k] = bytes.Clone(v)
	}
	return out
}

// Package returns the bundle as a package for [Runtime.Install]: its files with its manifest and
// signatures, which Install checks again under the policy.
func (b *Bundle) Package() map[string][]byte {
	out := b.Files()
	out[ManifestPath] = bytes.Clone(b.manifestData)
	for k, v := range b.sigs {
		out[SigDir+k+".sig"] = bytes.Clone(v)
	}
	return out
}

// ManifestDigest is the sha256 of the manifest's bytes, "sha256:<hex>": what a signature signs.
func (b *Bundle) ManifestDigest() string {
	sum := sha256.Sum256(b.manifestData)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// Pack writes the skill at dir as a bundle to w and returns its manifest. The skill id is
// dir's base name. Packing the same tree twice writes the same bytes.
//
// # Errors
//
// A tree the digest refuses (too many files or bytes); a file that changed while it was packed;
// a tree over the default [Limits], which no installer would accept.
func Pack(ctx context.Context, dir string, w io.Writer) (*Manifest, error) {
	id := filepath.Base(filepath.Clean(dir))
	if !spec.ValidID(id) {
		return nil, fmt.Errorf("pack %s: %q is not a skill id: name the directory after the skill (lower-case letters, digits and '-')", dir, id)
	}
	t, err := Walk(dir, nil, false)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	l := Limits{}.WithDefaults()
	if len(t.Files)+1 > l.MaxFiles {
		return nil, fmt.Errorf("pack %s: %d files, more than the %d a package may hold (%s)", dir, len(t.Files), l.MaxFiles-1, LimitFiles)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	defer root.Close()
	m := Manifest{Format: Format, Skill: id, Digest: t.Digest, Files: make([]File, 0, len(t.Files))}
	files := make(map[string][]byte, len(t.Files))
	var total int64
	for _, f := range t.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if f.Size > l.fileMax(f.Rel) {
			return nil, &LimitError{Limit: LimitFileBytes, File: f.Rel, Got: f.Size, Max: l.fileMax(f.Rel)}
		}
		if total += f.Size; total > l.MaxBytes {
			return nil, &LimitError{Limit: LimitBytes, File: f.Rel, Got: total, Max: l.MaxBytes}
		}
		data, err := ReadRootFile(root, f.Rel, f.Size)
		if err != nil {
			return nil, fmt.Errorf("pack %s: %s: %w", dir, f.Rel, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.Sum {
			return nil, fmt.Errorf("pack %s: %s changed while it was packed: pack again", dir, f.Rel)
		}
		files[f.Rel] = data
		m.Files = append(m.Files, File{Path: f.Rel, Size: f.Size, SHA256: f.Sum})
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	b := &Bundle{manifest: m, manifestData: append(data, '\n'), files: files}
	if err := b.write(w); err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	return &m, nil
}

// ReadRootFile reads rel in root, of the size the walk found, and no more.
func ReadRootFile(root *os.Root, rel string, size int64) ([]byte, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, errors.New("changed while it was packed: pack again")
	}
	return data, nil
}

// write writes b as a .tar.gz to w, deterministically (see the format above).
func (b *Bundle) write(w io.Writer) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	entry := func(name string, data []byte) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := entry(ManifestPath, b.manifestData); err != nil {
		return err
	}
	for _, f := range b.manifest.Files {
		if err := entry(f.Path, b.files[f.Path]); err != nil {
			return err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(b.sigs)) {
		if err := entry(SigDir+key+".sig", b.sigs[key]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// Read reads a bundle (a .tar.gz) within l (zero fields: the defaults) and checks it: the
// archive's bounds as every package upload's (entries, sizes, the inflation ratio), then that its
// files are exactly those its manifest lists, with their sizes and sha256, and that the
// manifest's digest is theirs. Signatures are read, not checked: see [Bundle.Verify].
//
// # Errors
//
// A *LimitError for a bound crossed; a *ManifestError for an entry that is not a regular
// file, a path that is not clean and relative, or an entry twice; *Error values (errors.Is
// ErrInvalid), joined, for every way the contents differ from the manifest.
func Read(r io.Reader, l Limits) (*Bundle, error) {
	pr := NewReader(l)
	if err := pr.AddTarGz(r); err != nil {
		return nil, err
	}
	b, ok, err := FromFiles(pr.Files())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Error{Entry: ManifestPath, Msg: "missing: this .tar.gz is not a bundle",
			Hint: "make one with skillbox pack DIR -o FILE"}
	}
	return b, nil
}

// FromFiles splits a package's files into a bundle: ok is false when there is no bundle
// manifest (a plain package). Every problem is reported, joined.
func FromFiles(all map[string][]byte) (b *Bundle, ok bool, err error) {
	data, ok := all[ManifestPath]
	if !ok {
		for name := range all {
			if strings.HasPrefix(name, bundleDir) {
				return nil, true, &Error{Entry: ManifestPath, Msg: "missing, while " + name + " is there",
					Hint: "pack the skill again with skillbox pack"}
			}
		}
		return nil, false, nil
	}
	b = &Bundle{manifestData: data, files: map[string][]byte{}, sigs: map[string][]byte{}}
	var problems []error
	for name, content := range all {
		switch {
		case name == ManifestPath:
		case strings.HasPrefix(name, SigDir):
			key, ok := strings.CutSuffix(strings.TrimPrefix(name, SigDir), ".sig")
			if _, err := parseKeyHex(key); !ok || err != nil {
				problems = append(problems, &Error{Entry: name, Msg: "not a signature: a signature is .bundle/signatures/<64 hex digits of the ed25519 public key>.sig"})
				continue
			}
			b.sigs[key] = content
		case strings.HasPrefix(name, bundleDir):
			problems = append(problems, &Error{Entry: name, Msg: "unknown bundle entry", Hint: "a bundle's own entries are .bundle/manifest.json and .bundle/signatures/"})
		default:
			b.files[name] = content
		}
	}
	if len(b.sigs) > maxBundleSignatures {
		problems = append(problems, &Error{Entry: SigDir, Msg: fmt.Sprintf("%d signatures, more than %d", len(b.sigs), maxBundleSignatures)})
	}
	if err := b.parseManifest(); err != nil {
		return nil, true, errors.Join(append(problems, err)...)
	}
	problems = append(problems, b.checkFiles()...)
	if len(problems) > 0 {
		return nil, true, errors.Join(problems...)
	}
	return b, true, nil
}

// parseManifest reads the manifest strictly: known fields only, the format, a skill id, sorted
// clean paths that the tree digest covers, sha256 in hex.
func (b *Bundle) parseManifest() error {
	bad := func(msg string, args ...any) error {
		return &Error{Entry: ManifestPath, Msg: fmt.Sprintf(msg, args...)}
	}
	d := json.NewDecoder(bytes.NewReader(b.manifestData))
	d.DisallowUnknownFields()
	if err := d.Decode(&b.manifest); err != nil {
		return bad("not a bundle manifest: %v", err)
	}
	if d.More() {
		return bad("more than one JSON value")
	}
	m := &b.manifest
	switch {
	case m.Format != Format:
		return bad("format %q, want %q (a bundle from another version of skillbox?)", m.Format, Format)
	case !spec.ValidID(m.Skill):
		return bad("skill: %q is not a skill id", m.Skill)
	}
	for i, f := range m.Files {
		field := fmt.Sprintf("files[%d]", i)
		switch {
		case !CleanPath(f.Path) || !covered(f.Path):
			return bad("%s.path: %q is not a path a bundle holds (clean, relative, not hidden, not under src/)", field, f.Path)
		case i > 0 && m.Files[i-1].Path >= f.Path:
			return bad("%s.path: %q is out of order or listed twice (files are sorted by path, byte order)", field, f.Path)
		case f.Size < 0:
			return bad("%s.size: %d is negative", field, f.Size)
		}
		if sum, err := hex.DecodeString(f.SHA256); err != nil || len(sum) != sha256.Size || strings.ToLower(f.SHA256) != f.SHA256 {
			return bad("%s.sha256: %q is not 64 lower-case hex digits", field, f.SHA256)
		}
	}
	return nil
}

// checkFiles compares the files with the manifest: each listed file present with its size and
// sha256, none more, and the digest the manifest's.
func (b *Bundle) checkFiles() []error {
	var problems []error
	listed := make(map[string]bool, len(b.manifest.Files))
	tf := make([]TreeFile, 0, len(b.manifest.Files))
	for _, f := range b.manifest.Files {
		listed[f.Path] = true
		tf = append(tf, TreeFile{Rel: f.Path, Size: f.Size, Sum: f.SHA256})
		data, ok := b.files[f.Path]
		if !ok {
			problems = append(problems, &Error{Entry: f.Path, Msg: "listed in the manifest but missing from the bundle (removed)"})
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); int64(len(data)) != f.Size || got != f.SHA256 {
			problems = append(problems, &Error{Entry: f.Path, Msg: fmt.Sprintf("changed: %d bytes with sha256 %s, the manifest says %d bytes with sha256 %s", len(data), got, f.Size, f.SHA256)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.files)) {
		if !listed[name] {
			problems = append(problems, &Error{Entry: name, Msg: "not listed in the manifest (added)"})
		}
	}
	if d := SumTree(tf); d != b.manifest.Digest {
		problems = append(problems, &Error{Entry: ManifestPath, Msg: fmt.Sprintf("digest: %q is not the tree digest of the files it lists (%s)", b.manifest.Digest, d)})
	}
	return problems
}

// CleanPath reports whether name is a clean, relative slash path with no "..", backslash or NUL.
func CleanPath(name string) bool {
	return name != "" && name != "." && path.Clean(name) == name && !path.IsAbs(name) &&
		name != ".." && !strings.HasPrefix(name, "../") && !strings.ContainsAny(name, "\\\x00")
}

// covered reports whether the tree digest covers a file at the clean path name: not hidden, not
// under src/ (see walk).
func covered(name string) bool {
	if name == "src" || strings.HasPrefix(name, "src/") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// Unpack writes the bundle's files into dir, which must not exist or be empty; it is made 0755,
// files 0644. Paths were checked when the bundle was read; dir is written through an os.Root too.
func (b *Bundle) Unpack(dir string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("unpack into %s: the directory is not empty: name a new one", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range b.manifest.Files {
		if d := path.Dir(f.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("unpack %s: %w", f.Path, err)
			}
		}
		if err := root.WriteFile(f.Path, b.files[f.Path], 0o644); err != nil {
			return fmt.Errorf("unpack %s: %w", f.Path, err)
		}
	}
	return nil
}
