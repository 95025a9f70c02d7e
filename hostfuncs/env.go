package hostfuncs

// env answers skillbox_env: the granted value, or NOT_FOUND for anything else, so a skill cannot
// tell a variable it was refused from one that does not exist (and learn nothing of the host).
func (c *Call) env(name []byte) reply {
	if len(name) == 0 || len(name) > maxNameBytes {
		return fail(StatusInvalid, "variable name must be 1 to %d bytes", maxNameBytes)
	}
	v, granted := c.Grant.Env[string(name)]
	if !granted {
		// Noted for the operator, not counted as a refusal: probing an optional variable is normal.
		c.mu.Lock()
		c.note("env " + escapeControl(string(name)) + ": not granted")
		c.mu.Unlock()
		return fail(StatusNotFound, "%s is not set", escapeControl(string(name)))
	}
	return ok([]byte(v))
}
