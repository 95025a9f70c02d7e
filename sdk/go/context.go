package skill

import (
	"fmt"

	"github.com/skillbox-dev/skillbox/sdk/go/internal/hostcall"
)

// Context is a skill's handle on the host, handed to the handler by Run. Its zero value
// talks to the real host; it is a struct so that capabilities can be added later
// without changing handler signatures.
type Context struct {
	host host // nil means the platform's host; tests substitute a fake
}

// host is the whole boundary to the Skillbox host: raw bytes in, raw reply blocks out.
// Everything above it (framing, statuses, errors) is plain Go shared by all platforms.
type host = hostcall.Host

func (c *Context) h() host {
	if c == nil || c.host == nil {
		return platformHost
	}
	return c.host
}

// Fetch sends req through the host and returns the response, whatever its HTTP status.
//
// # Errors
//
// An *Error when the host refuses or fails the request: ErrDenied for a host, method or
// address outside the grant, ErrInvalid for a malformed request, ErrLimit for too many
// fetches or too large a body, ErrFailed for DNS, connection and timeout failures.
func (c *Context) Fetch(req Request) (*Response, error) {
	head, err := encodeRequest(req)
	if err != nil {
		return nil, &Error{Op: "fetch", Status: Invalid, Message: err.Error()}
	}
	payload, err := splitReply("fetch", c.h().Fetch(head, req.Body))
	if err != nil {
		return nil, err
	}
	return decodeResponse(payload)
}

// Get fetches url with GET. See Fetch for the errors.
func (c *Context) Get(url string) (*Response, error) {
	return c.Fetch(Request{Method: "GET", URL: url})
}

// Env returns the value of the granted variable name. A variable outside the grant looks
// exactly like an unset one, by design: a skill cannot probe the host's environment.
func (c *Context) Env(name string) (string, bool) {
	v, err := splitReply("env", c.h().Env([]byte(name)))
	if err != nil {
		return "", false
	}
	return string(v), true
}

// ReadFile returns the contents of the file at the absolute virtual path, which lies
// under a granted mount or under /skill, the skill's own directory.
//
// # Errors
//
// ErrNotFound when it does not exist, ErrDenied outside the mounts, ErrInvalid for a
// relative path or a ".." segment, ErrLimit past the run's file size limit.
func (c *Context) ReadFile(path string) ([]byte, error) {
	return splitReply("read_file", c.h().ReadFile([]byte(path)))
}

// WriteFile creates or replaces the file at path with data, creating parent directories
// inside the mount.
//
// # Errors
//
// ErrDenied on a read-only mount or outside the mounts, ErrInvalid for a bad path,
// ErrLimit when the run's write quota would be exceeded.
func (c *Context) WriteFile(path string, data []byte) error {
	_, err := splitReply("write_file", c.h().WriteFile([]byte(path), data))
	return err
}

// Level is the severity of a log line; the values are the ABI's.
type Level int32

// Log levels of skillbox_log. They carry a Level prefix because the package's error
// type is already named Error.
const (
	LevelDebug Level = 0
	LevelInfo  Level = 1
	LevelWarn  Level = 2
	LevelError Level = 3
)

// Log appends msg to the run's logs. Logging never fails: past the run's log quota the
// host drops the line and counts it.
func (c *Context) Log(level Level, msg string) { c.h().Log(int32(level), []byte(msg)) }

// Debugf logs at LevelDebug, formatting like fmt.Sprintf.
func (c *Context) Debugf(format string, args ...any) {
	c.Log(LevelDebug, fmt.Sprintf(format, args...))
}

// Infof logs at LevelInfo, formatting like fmt.Sprintf.
func (c *Context) Infof(format string, args ...any) {
	c.Log(LevelInfo, fmt.Sprintf(format, args...))
}

// Warnf logs at LevelWarn, formatting like fmt.Sprintf.
func (c *Context) Warnf(format string, args ...any) {
	c.Log(LevelWarn, fmt.Sprintf(format, args...))
}

// Errorf logs at LevelError, formatting like fmt.Sprintf. It returns nothing: it is a
// log line, not an error constructor.
func (c *Context) Errorf(format string, args ...any) {
	c.Log(LevelError, fmt.Sprintf(format, args...))
}
