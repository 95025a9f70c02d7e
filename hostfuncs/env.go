package hostfuncs

import "context"

// Bounds on what a guest may hand an operation. Adapters use them too, to bound what they copy out
// of guest memory before calling: a hostile module must not make the host copy a whole memory to
// learn that a path is too long.
const (
	MaxNameBytes = 256  // an environment variable's name
	MaxPathBytes = 4096 // a virtual file path
)

// Env returns the granted value of the variable name. A variable that is not granted answers
// NOT_FOUND exactly like one that does not exist, so a skill learns nothing of the host; the
// host's environment is never inherited.
//
// A variable the policy's ask section lists is put to a person first, when the run may ask one.
func (c *Call) Env(ctx context.Context, name string) (string, error) {
	if len(name) == 0 || len(name) > MaxNameBytes {
		return "", refuse(StatusInvalid, "variable name must be 1 to %d bytes", MaxNameBytes)
	}
	v, granted := c.Grant.Env[name]
	if !granted {
		if _, ok := c.Grant.secretNamed(name); ok {
			return c.placeholder(name), nil // the secret stays on the host: placeholder.go
		}
		if v, ok := c.envAllowed(ctx, name); ok {
			return v, nil
		}
		// Noted for the operator, not counted as a refusal: probing an optional variable is normal.
		c.mu.Lock()
		c.note("env " + escapeControl(name) + ": not granted")
		c.mu.Unlock()
		return "", refuse(StatusNotFound, "%s is not set", escapeControl(name))
	}
	return v, nil
}
