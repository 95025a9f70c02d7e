package safefile

import (
	"fmt"
	"io"
	"io/fs"
)

// ReadFile reads a regular file of at most max bytes. A skill package is untrusted: its
// module may be a symlink to /dev/zero or a FIFO, which a plain ReadFile would read forever or
// wait on; safefile refuses those, and the limited read stops a file that grows meanwhile.
func ReadFile(path string, max int64) ([]byte, error) {
	data, _, err := ReadFileStat(path, max)
	return data, err
}

// ReadFileStat is ReadFile that also returns the file's identity, as the open file has it.
func ReadFileStat(path string, max int64) ([]byte, fs.FileInfo, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, nil, fmt.Errorf("%d bytes is more than the %d allowed", st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("more than the %d bytes allowed", max)
	}
	return data, st, nil
}
