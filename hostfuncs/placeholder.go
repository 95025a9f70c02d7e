package hostfuncs

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// A skill written for a runtime that hands it secrets reads one from its environment and sets the
// header itself (`Authorization: Bearer ${ctx.env.OPENAI_API_KEY}`). In Skillbox the guest never
// sees a secret: the host adds the secret's header to requests to the secret's hosts. So env of a
// name the grant has as a secret (and not as a variable) answers a placeholder, random for each
// run, and fetch replaces the placeholder with the secret only in that secret's header, only on
// a request to its hosts over https (secretTransport). Anywhere else (another header, a body, a
// URL, another host, plain http) the placeholder is sent as it is, and is worthless: it is not
// the secret, and no other run's fetch takes it.

// placeholderPrefix starts every placeholder, so that one in a log or a server's record is
// recognised for what it is.
const placeholderPrefix = "skillbox-secret-"

// placeholder returns this run's placeholder for the secret name, made on first use.
func (c *Call) placeholder(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.placeholders[name]; ok {
		return p
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	p := placeholderPrefix + hex.EncodeToString(b[:])
	if c.placeholders == nil {
		c.placeholders = map[string]string{}
	}
	c.placeholders[name] = p
	return p
}

// placeholderOf returns this run's placeholder for the secret name, "" when env has not made one.
func (c *Call) placeholderOf(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.placeholders[name]
}

// secretNamed returns the grant's secret called name.
func (g *Grant) secretNamed(name string) (Secret, bool) {
	for _, s := range g.Secrets {
		if s.Name == name {
			return s, true
		}
	}
	return Secret{}, false
}

// carriesPlaceholder reports whether v, a value the guest set for s's header, holds this run's
// placeholder for s: the header the host then fills in.
func (c *Call) carriesPlaceholder(s Secret, v string) bool {
	p := c.placeholderOf(s.Name)
	return p != "" && strings.Contains(v, p)
}

// secretValue is the value of s's header on a request to its hosts, given what the guest set
// there (guest, "" when nothing): the guest's value with the placeholder replaced by the secret,
// when it holds the placeholder and the secret's raw value is known; else the formatted value.
func (c *Call) secretValue(s Secret, guest string) string {
	if p := c.placeholderOf(s.Name); p != "" && s.Raw != "" && strings.Contains(guest, p) {
		return strings.ReplaceAll(guest, p, s.Raw)
	}
	return s.Value
}
