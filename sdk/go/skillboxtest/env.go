package skillboxtest

import skill "github.com/skillbox-dev/skillbox/sdk/go"

// getenv answers skillbox_env: a variable that is not granted is simply not set.
func (h *Host) getenv(name string) (string, *refusal) {
	if len(name) == 0 || len(name) > maxNameBytes {
		return "", refuse(skill.Invalid, "variable name must be 1 to %d bytes", maxNameBytes)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.env[name]
	if !ok {
		h.deny("env " + name + ": not granted") // noted, as the host notes a probe
		return "", refuse(skill.NotFound, "%s is not set", name)
	}
	return v, nil
}

// log answers skillbox_log: past the log budget a line is dropped and counted, as the
// host does; a level outside the ABI's is info.
func (h *Host) log(level skill.Level, msg string) {
	if level < skill.LevelDebug || level > skill.LevelError {
		level = skill.LevelInfo
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cost := int64(len(msg)) + logOverhead
	if h.logBytes+cost > h.limits.MaxLogBytes {
		h.dropped++
		return
	}
	h.logBytes += cost
	h.logs = append(h.logs, Log{Level: level, Message: msg})
}
