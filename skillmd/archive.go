package skillmd

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Archive writes the files of pkg, read from dir, to w as a gzip-compressed tar of the skill's
// directory, SKILL.md at its root: the archive form of the /.well-known/agent-skills index.
// The same files always make the same bytes (entries in pkg's order, no owner, time or name in
// the headers, mode 0644, or 0755 for an executable file), so the archive's digest can be
// published before anyone asks for it.
//
// Each file is checked against pkg as it is read, so the archive holds exactly what pkg
// describes, or nothing: w should be a buffer that is dropped on error.
//
// # Errors
//
// A [*PublishError] when a file changed since pkg was made (publish it again); an error of w.
func Archive(w io.Writer, dir string, pkg *Package) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return osError(".", err)
	}
	defer root.Close()
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range pkg.Files {
		if err := archiveFile(tw, root, pkg.instructions, f); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func archiveFile(tw *tar.Writer, root *os.Root, instructions string, f File) error {
	changed := &PublishError{Reason: fmt.Sprintf("%s changed since the skill was listed", f.Path)}
	name := f.Path
	if name == InstructionsName {
		name = instructions
	}
	in, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return changed
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() != f.Size {
		return changed
	}
	mode := int64(0o644)
	if f.Executable {
		mode = 0o755
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Size: f.Size, Mode: mode, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(in, f.Size))
	if err != nil {
		return err
	}
	if n != f.Size || digestPrefix+hex.EncodeToString(h.Sum(nil)) != f.Digest {
		return changed
	}
	return nil
}
